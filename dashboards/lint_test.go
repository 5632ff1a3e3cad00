package dashboards

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// Grafana's dashboard-linter as scripts/install-test-deps.sh builds it: the
// tagged v0.2.0 resolves but a dependency of it cannot be fetched here.
const (
	linterModule  = "github.com/grafana/dashboard-linter"
	linterVersion = "v0.0.0-20241224134444-1765d94aec4a"
)

func dashboardLinter(t *testing.T) string {
	t.Helper()
	bin := testkit.Tool(t, "dashboard-linter", linterModule+" "+linterVersion+", built by scripts/install-test-deps.sh")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "version", "-m", bin).Output()
	if err != nil || !strings.Contains(string(out), linterModule+"\t"+linterVersion) {
		t.Fatalf("%s is not %s %s (go version -m: %v)\n%s", bin, linterModule, linterVersion, err, out)
	}
	return bin
}

// lint runs `dashboard-linter lint --strict FILE`, as a user would in this
// directory (the linter then reads exclusions from a .lint file beside it).
func lint(t *testing.T, bin, file string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "lint", "--strict", file)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	// The linter prints every rule it checked and ✔️ or ❌: keep the findings.
	var findings []string
	for _, l := range strings.Split(out.String(), "\n") {
		if !strings.HasPrefix(l, "Checks that") && !strings.Contains(l, "OK") && strings.TrimSpace(l) != "" {
			findings = append(findings, l)
		}
	}
	return strings.Join(findings, "\n"), err
}

// TestGrafanaDashboardLinter runs Grafana's own dashboard-linter in strict
// mode (warnings fail too) on every shipped dashboard.
func TestGrafanaDashboardLinter(t *testing.T) {
	bin := dashboardLinter(t)
	files, err := filepath.Glob("*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboard (%v)", err)
	}
	for _, f := range files {
		if out, err := lint(t, bin, f); err != nil {
			t.Errorf("dashboard-linter lint --strict %s: %v\n%s", f, err, out)
		}
	}

	// The linter finds what it must: a copy of a dashboard whose first
	// rate() has no job matcher and a fixed window fails.
	var d Dashboard
	for _, x := range loadAll(t) {
		if x.File == "indexima-overview.json" {
			d = x
		}
	}
	broken := false
	for _, p := range d.Panels() {
		targets, _ := p["targets"].([]any)
		for _, tg := range targets {
			tm, _ := tg.(map[string]any)
			expr, _ := tm["expr"].(string)
			if !broken && strings.Contains(expr, "[$__rate_interval]") {
				expr = strings.ReplaceAll(expr, "[$__rate_interval]", "[5m]")
				tm["expr"] = strings.ReplaceAll(expr, `job=~"$job", `, "")
				broken = true
			}
		}
	}
	if !broken {
		t.Fatal("no rate() target to break in the overview")
	}
	b, err := json.Marshal(d.Model)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "broken.json")
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := lint(t, bin, bad)
	if err == nil || !strings.Contains(out, "should use $__rate_interval") || !strings.Contains(out, "job selector not found") {
		t.Errorf("dashboard-linter lint --strict on a broken dashboard: %v, want the two findings:\n%s", err, out)
	}

	// It parses the LogQL of the events dashboard too: a copy whose first
	// metric query lost a parenthesis, and whose second has a fixed range,
	// fails.
	var events Dashboard
	for _, x := range loadAll(t) {
		if x.File == "indexima-events.json" {
			events = x
		}
	}
	metric := 0
	for _, p := range events.Panels() {
		targets, _ := p["targets"].([]any)
		for _, tg := range targets {
			tm, _ := tg.(map[string]any)
			expr, _ := tm["expr"].(string)
			if !strings.Contains(expr, "[$__auto])") {
				continue
			}
			switch metric++; metric {
			case 1:
				tm["expr"] = strings.Replace(expr, "count_over_time(", "count_over_time((", 1)
			case 2:
				tm["expr"] = strings.Replace(expr, "[$__auto])", "[5m])", 1)
			}
		}
	}
	if metric < 2 {
		t.Fatal("no LogQL metric query to break in the events dashboard")
	}
	if b, err = json.Marshal(events.Model); err != nil {
		t.Fatal(err)
	}
	bad = filepath.Join(t.TempDir(), "broken-events.json")
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = lint(t, bin, bad)
	if err == nil || !strings.Contains(out, "Invalid LogQL query") || !strings.Contains(out, "should use $__auto") {
		t.Errorf("dashboard-linter lint --strict on a broken events dashboard: %v, want a LogQL parse error and a fixed range:\n%s", err, out)
	}
}

// TestLinterExclusionsJustified: the linter reads exclusions and downgrades
// from dashboards/.lint. None is needed today; any added later must say why.
func TestLinterExclusionsJustified(t *testing.T) {
	data, err := os.ReadFile(".lint")
	if os.IsNotExist(err) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]map[string]struct {
		Reason  string `yaml:"reason"`
		Entries []struct {
			Reason string `yaml:"reason"`
		} `yaml:"entries"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatalf(".lint: %v", err)
	}
	for section, rules := range cfg {
		for rule, r := range rules {
			if strings.TrimSpace(r.Reason) != "" {
				continue
			}
			for i, e := range r.Entries {
				if strings.TrimSpace(e.Reason) == "" {
					t.Errorf(".lint %s.%s entry %d: no reason: say why the rule does not apply", section, rule, i)
				}
			}
			if len(r.Entries) == 0 {
				t.Errorf(".lint %s.%s: no reason: say why the rule does not apply", section, rule)
			}
		}
	}
}
