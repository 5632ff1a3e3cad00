package testkit

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ToolsBin is where scripts/install-test-deps.sh puts the pinned Go tools
// (helm, kubeconform, prometheus3 and promtool3): $INDEXIMA_TOOLS_BIN, else
// ~/.cache/indexima_exporter/tools/bin.
func ToolsBin() string {
	if dir := os.Getenv("INDEXIMA_TOOLS_BIN"); dir != "" {
		return dir
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".cache", "indexima_exporter", "tools", "bin")
}

// Tool returns the path of an external tool: the tools cache first (pinned
// versions), then PATH. A missing tool fails the test when env CI is set,
// since `make test` installs every tool the tests use, and skips it
// elsewhere; install names what provides it (e.g. "Debian package prometheus").
func Tool(t testing.TB, name, install string) string {
	t.Helper()
	if dir := ToolsBin(); dir != "" {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	msg := name + " not found in " + ToolsBin() + " nor PATH: install it (" + install + "; `make test-deps` does)"
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// PromtoolCheckMetrics runs `promtool check metrics` (Prometheus's own lint
// of the exposition format and naming conventions) on an exposition and
// fails the test on any finding.
func PromtoolCheckMetrics(t testing.TB, exposition string) {
	t.Helper()
	promtool := Tool(t, "promtool", "Debian package prometheus")
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(exposition)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out.String())
	}
}
