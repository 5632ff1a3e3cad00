// Package prometheusrules holds the tests of the shipped Prometheus files:
// the alerting rules (rules/), their promtool unit tests (tests/) and the
// example configurations (prometheus.yml, alertmanager.yml). The files
// themselves are the product; this package only proves them.
package prometheusrules

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// promtool returns the path of promtool (see testkit.Tool for the CI rule).
func promtool(t *testing.T) string {
	t.Helper()
	return testkit.Tool(t, "promtool", "Debian package prometheus")
}

// runPromtool runs promtool with args in this directory, bounded in time,
// and fails the test with promtool's output when it does not exit 0.
func runPromtool(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, promtool(t), args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("promtool %v: %v\n%s", args, err, out.String())
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
	runPromtool(t, append([]string{"check", "rules"}, ruleFiles(t)...)...)
}

func TestPromtoolCheckConfig(t *testing.T) {
	// Also checks the rule files that prometheus.yml names.
	runPromtool(t, "check", "config", "prometheus.yml")
}

func TestPromtoolTestRules(t *testing.T) {
	runPromtool(t, append([]string{"test", "rules"}, unitTestFiles(t)...)...)
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
