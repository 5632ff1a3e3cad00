// Package prometheusrules holds the tests of the shipped Prometheus files:
// the alerting rules (rules/), their promtool unit tests (tests/) and the
// example configurations (prometheus.yml, prometheus-probe.yml,
// alertmanager.yml). The files themselves are the product; this package
// only proves them.
package prometheusrules

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// eachLine runs f once per tested Prometheus line (Debian's 2.42 and 3.15),
// as a subtest named after the line: the shipped files must hold on both.
func eachLine(t *testing.T, f func(t *testing.T, line testkit.PrometheusLine)) {
	for _, line := range testkit.PrometheusLines {
		t.Run("prometheus-"+line.Name, func(t *testing.T) { f(t, line) })
	}
}

// runPromtool runs the line's promtool with args in this directory, bounded
// in time, and fails the test with promtool's output when it does not exit 0.
func runPromtool(t *testing.T, line testkit.PrometheusLine, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, line.Promtool(t), args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("promtool %s %v: %v\n%s", line.Name, args, err, out.String())
	}
	return out.String()
}

func ruleFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("rules", "*.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no rule files in rules/ (err %v)", err)
	}
	return files
}

func unitTestFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("tests", "*.test.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no promtool unit tests in tests/ (err %v)", err)
	}
	return files
}

func TestPromtoolCheckRules(t *testing.T) {
	eachLine(t, func(t *testing.T, line testkit.PrometheusLine) {
		runPromtool(t, line, append([]string{"check", "rules"}, ruleFiles(t)...)...)
	})
}

// prometheusConfigs are the shipped Prometheus configurations: one target
// for the whole exporter, and one target per node discovered from /sd.
var prometheusConfigs = []string{"prometheus.yml", "prometheus-probe.yml"}

func TestPromtoolCheckConfig(t *testing.T) {
	// Also checks the rule files that the configurations name.
	eachLine(t, func(t *testing.T, line testkit.PrometheusLine) {
		for _, f := range prometheusConfigs {
			runPromtool(t, line, "check", "config", f)
		}
	})
}

// TestNativeHistogramSettingIsForPrometheus3: the configurations show the
// Prometheus >= 3.8 setting convert_classic_histograms_to_nhcb commented
// out. Uncommented, as its comment tells a Prometheus 3 user to do, 3.15
// loads it; 2.42 refuses it, which is why it ships commented.
func TestNativeHistogramSettingIsForPrometheus3(t *testing.T) {
	dir := t.TempDir()
	for _, f := range prometheusConfigs {
		shipped, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(testkit.UncommentNHCB(t, string(shipped))), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rules, err := filepath.Abs("rules")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(rules, filepath.Join(dir, "rules")); err != nil {
		t.Fatal(err)
	}
	eachLine(t, func(t *testing.T, line testkit.PrometheusLine) {
		for _, f := range prometheusConfigs {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			out, err := exec.CommandContext(ctx, line.Promtool(t), "check", "config", filepath.Join(dir, f)).CombinedOutput()
			cancel()
			switch {
			case line.Major >= 3 && err != nil:
				t.Errorf("Prometheus %s refuses %s with %s uncommented: %v\n%s", line.Name, f, testkit.NHCBSetting, err, out)
			case line.Major < 3 && (err == nil || !strings.Contains(string(out), "convert_classic_histograms_to_nhcb")):
				t.Errorf("Prometheus %s: want the uncommented %s of %s refused (hence commented), got err %v\n%s", line.Name, testkit.NHCBSetting, f, err, out)
			}
		}
	})
}

// TestPromtoolTestRules runs the rule unit tests on both lines: Prometheus 3
// reads range windows left-open (a sample exactly at t - 5m is outside
// [5m]), so a rule or a test that hangs on a window's edge passes on one
// line and fails on the other.
func TestPromtoolTestRules(t *testing.T) {
	eachLine(t, func(t *testing.T, line testkit.PrometheusLine) {
		runPromtool(t, line, append([]string{"test", "rules"}, unitTestFiles(t)...)...)
	})
}

func TestAmtoolCheckConfig(t *testing.T) {
	p := testkit.Tool(t, "amtool", "Debian package prometheus-alertmanager")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, p, "check-config", "alertmanager.yml").CombinedOutput()
	if err != nil {
		t.Fatalf("amtool check-config alertmanager.yml: %v\n%s", err, out)
	}
}
