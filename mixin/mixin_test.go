package mixin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// jsonnetVersion is the go-jsonnet release scripts/install-test-deps.sh builds.
const jsonnetVersion = "v0.22.0"

const install = "github.com/google/go-jsonnet " + jsonnetVersion + ", built by scripts/install-test-deps.sh"

// jsonnet returns the pinned jsonnet (the CI rule: missing fails in CI).
func jsonnet(t *testing.T) string {
	t.Helper()
	bin := testkit.Tool(t, "jsonnet", install)
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), jsonnetVersion) {
		t.Fatalf("%s --version: %v %q, want %s", bin, err, out, jsonnetVersion)
	}
	return bin
}

func runCmd(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", filepath.Base(name), strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

// TestShippedFilesAreTheMixinRendered renders the mixin as `make mixin`
// does and requires every shipped rule file and dashboard to be exactly its
// output, and the mixin to render nothing that is not shipped: the mixin is
// the one source of the alerts and dashboards.
func TestShippedFilesAreTheMixinRendered(t *testing.T) {
	bin := jsonnet(t)
	root := testkit.RepoRoot(t)
	out := t.TempDir()
	runCmd(t, root, []string{"JSONNET=" + bin}, filepath.Join(root, "scripts", "render-mixin.sh"), out)

	var rendered []string
	err := filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(out, path)
			rendered = append(rendered, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var shipped []string
	for _, glob := range []string{"deploy/prometheus/rules/*.yml", "deploy/helm/indexima-exporter/rules/*.yml", "dashboards/*.json"} {
		files, err := filepath.Glob(filepath.Join(root, glob))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			rel, _ := filepath.Rel(root, f)
			shipped = append(shipped, rel)
		}
	}
	sort.Strings(rendered)
	sort.Strings(shipped)
	if strings.Join(rendered, " ") != strings.Join(shipped, " ") {
		t.Errorf("the mixin renders %v, the repository ships %v: every rule file and dashboard comes from mixin/", rendered, shipped)
	}
	for _, rel := range rendered {
		got, err := os.ReadFile(filepath.Join(out, rel))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Errorf("%s: rendered by the mixin, not shipped (%v)", rel, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the mixin's rendering (%s); edit mixin/ and run `make mixin`", rel, firstDifference(want, got))
		}
	}
}

// firstDifference names the first line where two texts differ.
func firstDifference(shipped, rendered []byte) string {
	a, b := strings.Split(string(shipped), "\n"), strings.Split(string(rendered), "\n")
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return fmt.Sprintf("line %d: shipped %q, rendered %q", i+1, x, y)
		}
	}
	return "same lines"
}

// TestMixinFormatted: the jsonnet sources are as jsonnetfmt writes them.
func TestMixinFormatted(t *testing.T) {
	fmtBin := testkit.Tool(t, "jsonnetfmt", install)
	var files []string
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err == nil && (strings.HasSuffix(path, ".libsonnet") || strings.HasSuffix(path, ".jsonnet")) {
			files = append(files, path)
		}
		return err
	})
	if err != nil || len(files) == 0 {
		t.Fatalf("no jsonnet file (%v)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, fmtBin, append([]string{"--test"}, files...)...).CombinedOutput(); err != nil {
		t.Errorf("jsonnetfmt --test: %v: not formatted (jsonnetfmt -i FILE):\n%s", err, out)
	}
}

// rendering is the mixin with a user's _config, as JSON.
type rendering struct {
	RuleFile string `json:"ruleFile"`
	Alerts   struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Alert       string            `json:"alert"`
				Expr        string            `json:"expr"`
				For         string            `json:"for"`
				Annotations map[string]string `json:"annotations"`
			} `json:"rules"`
		} `json:"groups"`
	} `json:"alerts"`
	Dashboards map[string]json.RawMessage `json:"dashboards"`
}

// metricRef finds a metric name and its selector, if any.
var metricRef = regexp.MustCompile(`\b(indexima_[a-z_]+|up|process_[a-z_]+|go_[a-z_]+|scrape_duration_seconds)\b(\{[^}]*\})?`)

// TestMixinConfig renders the mixin as a kube-prometheus user would, with
// a job selector and other windows, and checks that _config reaches every
// selector of the alerts and dashboards and the windows of the alerts, and
// that Prometheus accepts the rules.
func TestMixinConfig(t *testing.T) {
	bin := jsonnet(t)
	const sel = `job="indexima-exporter"`
	code := `
local mixin = (import 'mixin.libsonnet') + {
  _config+:: {
    indeximaSelector: 'job="indexima-exporter"',
    exporterJobSelector: 'job="indexima-exporter"',
    nodeDownWindow: '10m',
    memoryLowWindow: '30m',
    clusterStoppedFor: '1h',
    statusURL: 'http://exporter.example:9897/status',
    eventLogSelector: 'job="indexima-events", env="prod"',
  },
};
{
  ruleFile: (import 'lib/rulefile.libsonnet').render(mixin.alertsHeader, mixin.prometheusAlerts),
  alerts: mixin.prometheusAlerts,
  dashboards: mixin.grafanaDashboards,
}`
	var r rendering
	if err := json.Unmarshal([]byte(runCmd(t, ".", nil, bin, "-J", ".", "-e", code)), &r); err != nil {
		t.Fatal(err)
	}

	rules := 0
	for _, g := range r.Alerts.Groups {
		for _, rule := range g.Rules {
			rules++
			refs := metricRef.FindAllStringSubmatch(rule.Expr, -1)
			if len(refs) == 0 {
				t.Errorf("%s: no metric found in %q", rule.Alert, rule.Expr)
			}
			for _, m := range refs {
				if !strings.Contains(m[2], sel) {
					t.Errorf("%s: %s%s lacks the configured %s", rule.Alert, m[1], m[2], sel)
				}
			}
			// With /probe targets instance is a node: statusURL replaces the
			// address taken from the labels.
			if u := rule.Annotations["status_url"]; !strings.HasPrefix(u, "http://exporter.example:9897/status") || strings.Contains(u, "query") {
				t.Errorf("%s: status_url %q does not use the configured statusURL", rule.Alert, u)
			}
			switch rule.Alert {
			case "IndeximaNodeDownReported":
				// The age of the latest report against the window, in seconds.
				if !strings.Contains(rule.Expr, "[10m]") || !strings.Contains(rule.Expr, "< 600") ||
					!strings.Contains(rule.Annotations["description"], "resolves 10 minutes after the latest report") {
					t.Errorf("%s: want nodeDownWindow 10m in the expression ([10m], < 600) and the description:\n%s\n%s", rule.Alert, rule.Expr, rule.Annotations["description"])
				}
			case "IndeximaMemoryLow":
				checkWindow(t, rule.Alert, rule.Expr, rule.Annotations["description"], "30m", "30 minutes")
			case "IndeximaClusterStopped":
				if rule.For != "1h" || !strings.Contains(rule.Annotations["description"], "for 1 hour.") {
					t.Errorf("%s: for %q, description %q: want clusterStoppedFor 1h in both", rule.Alert, rule.For, rule.Annotations["description"])
				}
			}
		}
	}
	if rules < 10 {
		t.Fatalf("%d alerting rules rendered", rules)
	}
	file := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(file, []byte(r.RuleFile), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, line := range testkit.PrometheusLines {
		out := runCmd(t, ".", nil, line.Promtool(t), "check", "rules", file)
		if !strings.Contains(out, fmt.Sprintf("SUCCESS: %d rules found", rules)) {
			t.Errorf("promtool %s check rules:\n%s", line.Name, out)
		}
	}

	if len(r.Dashboards) != 3 {
		t.Errorf("dashboards %d, want 3", len(r.Dashboards))
	}
	for name, raw := range r.Dashboards {
		var exprs []string
		collectExprs(raw, &exprs)
		if name == "indexima-events.json" {
			// LogQL of the event log's lines: each selects the configured
			// stream.
			if len(exprs) < 5 {
				t.Errorf("%s: %d queries found", name, len(exprs))
			}
			for _, e := range exprs {
				if !strings.Contains(e, `{job="indexima-events", env="prod"`) {
					t.Errorf("%s: %q lacks the configured stream selector", name, e)
				}
			}
			continue
		}
		if len(exprs) < 10 {
			t.Errorf("%s: %d queries found", name, len(exprs))
		}
		for _, e := range exprs {
			for _, m := range metricRef.FindAllStringSubmatch(e, -1) {
				if !strings.Contains(m[2], sel) {
					t.Errorf("%s: %s%s lacks the configured %s", name, m[1], m[2], sel)
				}
			}
		}
	}
}

func checkWindow(t *testing.T, alert, expr, description, window, words string) {
	t.Helper()
	if !strings.Contains(expr, "offset "+window) || !strings.Contains(expr, "["+window+"]") {
		t.Errorf("%s: the expression does not use the configured window %s:\n%s", alert, window, expr)
	}
	if !strings.Contains(description, "in the last "+words) {
		t.Errorf("%s: the description does not say %q: %s", alert, words, description)
	}
}

// collectExprs gathers the PromQL of a dashboard: targets' and annotations'
// "expr", variables' "query" strings.
func collectExprs(raw json.RawMessage, out *[]string) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				if s, ok := c.(string); ok && (k == "expr" || k == "query" && strings.HasPrefix(s, "label_values(")) {
					*out = append(*out, s)
				}
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(v)
}
