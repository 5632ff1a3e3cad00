package prometheusrules

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	yaml "go.yaml.in/yaml/v3"
)

// runbookBase is where every runbook_url must point: the runbook in the
// repository, one section per alert.
const runbookBase = "https://github.com/indexima-exporter/indexima_exporter/blob/main/docs/runbook.md"

type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []rule `yaml:"rules"`
	} `yaml:"groups"`
}

type rule struct {
	Alert       string            `yaml:"alert"`
	Record      string            `yaml:"record"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

type unitTestFile struct {
	Tests []struct {
		Name          string `yaml:"name"`
		AlertRuleTest []struct {
			Alertname string `yaml:"alertname"`
			ExpAlerts []any  `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// alerts returns every alerting rule of the shipped rule files.
func alerts(t *testing.T) []rule {
	t.Helper()
	var all []rule
	for _, f := range ruleFiles(t) {
		var rf ruleFile
		readYAML(t, f, &rf)
		for _, g := range rf.Groups {
			for _, r := range g.Rules {
				if r.Alert != "" {
					all = append(all, r)
				}
			}
		}
	}
	if len(all) == 0 {
		t.Fatal("no alerting rule found in rules/")
	}
	return all
}

var alertName = regexp.MustCompile(`^Indexima[A-Z][A-Za-z0-9]*$`)

func TestAlertConventions(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range alerts(t) {
		if !alertName.MatchString(a.Alert) {
			t.Errorf("alert %q: name must be CamelCase and start with Indexima", a.Alert)
		}
		if seen[a.Alert] {
			t.Errorf("alert %q defined twice", a.Alert)
		}
		seen[a.Alert] = true
		switch a.Labels["severity"] {
		case "critical", "warning", "info":
		default:
			t.Errorf("alert %s: severity label %q, want critical, warning or info", a.Alert, a.Labels["severity"])
		}
		for _, k := range []string{"summary", "description", "runbook_url", "status_url"} {
			if strings.TrimSpace(a.Annotations[k]) == "" {
				t.Errorf("alert %s: annotation %s missing", a.Alert, k)
			}
		}
		if want := runbookBase + "#" + strings.ToLower(a.Alert); a.Annotations["runbook_url"] != want {
			t.Errorf("alert %s: runbook_url %q, want %q", a.Alert, a.Annotations["runbook_url"], want)
		}
		// The exporter's /status page, at a node's card or a cluster's
		// section (ids of internal/statuspage), or at its top.
		if u := a.Annotations["status_url"]; !strings.Contains(u, "/status#node-") && !strings.Contains(u, "/status#cluster") && !strings.HasSuffix(u, "/status") {
			t.Errorf("alert %s: status_url %q does not link to /status", a.Alert, u)
		}
		if strings.Contains(a.Expr, "absent(") {
			t.Errorf("alert %s uses absent(): it would fire whenever the exporter restarts or a node is removed", a.Alert)
		}
	}
}

// githubAnchor is the anchor GitHub gives a Markdown heading: lower case,
// punctuation other than '-' and '_' dropped, spaces turned into '-'.
func githubAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func markdownAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	anchors := map[string]bool{}
	sc := bufio.NewScanner(f)
	inFence := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
			continue
		}
		if !inFence && strings.HasPrefix(line, "#") {
			anchors[githubAnchor(strings.TrimLeft(line, "#"))] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return anchors
}

func TestEveryAlertHasARunbookSectionAndADocEntry(t *testing.T) {
	docs := filepath.Join("..", "..", "docs")
	anchors := markdownAnchors(t, filepath.Join(docs, "runbook.md"))
	table, err := os.ReadFile(filepath.Join(docs, "alerts.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range alerts(t) {
		if !anchors[strings.ToLower(a.Alert)] {
			t.Errorf("docs/runbook.md has no section %q for alert %s (runbook_url would point nowhere)", "## "+a.Alert, a.Alert)
		}
		if !strings.Contains(string(table), "| "+a.Alert+" ") && !strings.Contains(string(table), "|"+a.Alert+"|") &&
			!strings.Contains(string(table), "["+a.Alert+"]") {
			t.Errorf("docs/alerts.md does not list alert %s in its table", a.Alert)
		}
	}
}

// TestEveryAlertIsUnitTested checks that the promtool tests cover each
// alert both firing and not firing (promtool itself checks the outcomes).
func TestEveryAlertIsUnitTested(t *testing.T) {
	firing, quiet := map[string]int{}, map[string]int{}
	for _, f := range unitTestFiles(t) {
		var tf unitTestFile
		readYAML(t, f, &tf)
		for _, tc := range tf.Tests {
			for _, art := range tc.AlertRuleTest {
				if len(art.ExpAlerts) > 0 {
					firing[art.Alertname]++
				} else {
					quiet[art.Alertname]++
				}
			}
		}
	}
	for _, a := range alerts(t) {
		if firing[a.Alert] == 0 {
			t.Errorf("alert %s has no promtool test where it fires", a.Alert)
		}
		if quiet[a.Alert] == 0 {
			t.Errorf("alert %s has no promtool test where it stays quiet", a.Alert)
		}
	}
}

func TestGithubAnchor(t *testing.T) {
	for in, want := range map[string]string{
		" IndeximaNodeDownReported":    "indeximanodedownreported",
		" Exporter logs: what to look": "exporter-logs-what-to-look",
		" up_down (2)":                 "up_down-2",
	} {
		if got := githubAnchor(in); got != want {
			t.Errorf("githubAnchor(%q) = %q, want %q", in, got, want)
		}
	}
}
