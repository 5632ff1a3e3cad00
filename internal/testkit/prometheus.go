package testkit

import (
	"strings"
	"testing"
)

// PrometheusLine is one Prometheus release line the tests prove the shipped
// rules, dashboards and configurations against.
type PrometheusLine struct {
	// Name is the release, as the test names show it ("2.42", "3.15").
	Name string
	// Major is the major version: 3 brings left-open range selectors,
	// OpenMetrics negotiated first, scrape_protocols and native histograms
	// with custom buckets (convert_classic_histograms_to_nhcb).
	Major int
	// prometheus and promtool are the commands' names, looked up by Tool.
	prometheus, promtool string
	install              string
}

// PrometheusLines are the lines `make test` runs: Debian's 2.42 (commands
// prometheus and promtool) and 3.15.0 built from the Go module proxy by
// scripts/install-test-deps.sh (prometheus3 and promtool3 in ToolsBin).
var PrometheusLines = []PrometheusLine{
	{Name: "2.42", Major: 2, prometheus: "prometheus", promtool: "promtool",
		install: "Debian package prometheus"},
	{Name: "3.15", Major: 3, prometheus: "prometheus3", promtool: "promtool3",
		install: "github.com/prometheus/prometheus v0.315.0, built by scripts/install-test-deps.sh"},
}

// Prometheus returns the path of the line's prometheus binary (Tool's CI
// rule: missing fails when CI is set, skips elsewhere).
func (l PrometheusLine) Prometheus(t testing.TB) string {
	t.Helper()
	return Tool(t, l.prometheus, l.install)
}

// Promtool returns the path of the line's promtool (same rule).
func (l PrometheusLine) Promtool(t testing.TB) string {
	t.Helper()
	return Tool(t, l.promtool, l.install)
}

// PrometheusLine3 returns the newest tested line, for the tests of what only
// Prometheus 3 has (OpenMetrics scrape protocols, NHCB conversion).
func PrometheusLine3() PrometheusLine { return PrometheusLines[len(PrometheusLines)-1] }

// NHCBSetting is the scrape setting the shipped Prometheus configurations
// carry commented out, for Prometheus >= 3.8 users: Prometheus 2.x refuses
// the key, so uncommenting it is the user's step.
const NHCBSetting = "convert_classic_histograms_to_nhcb: true"

// UncommentNHCB returns cfg with its commented NHCBSetting line(s) enabled,
// as a Prometheus 3 user would edit it; the test fails when cfg has none.
func UncommentNHCB(t testing.TB, cfg string) string {
	t.Helper()
	lines := strings.Split(cfg, "\n")
	n := 0
	for i, l := range lines {
		indent := len(l) - len(strings.TrimLeft(l, " "))
		if strings.TrimSpace(l) == "# "+NHCBSetting {
			lines[i] = l[:indent] + NHCBSetting
			n++
		}
	}
	if n == 0 {
		t.Fatalf("no commented %q line: the configuration does not show the Prometheus 3 setting", NHCBSetting)
	}
	return strings.Join(lines, "\n")
}
