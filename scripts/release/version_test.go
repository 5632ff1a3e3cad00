package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// TestVersionsAgree: the version being released is written in three places
// that must agree: VERSION (what make release and make image stamp), the
// top entry of CHANGELOG.md, and the Helm chart's appVersion (the default
// image tag of the chart).
func TestVersionsAgree(t *testing.T) {
	root := testkit.RepoRoot(t)
	read := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	version := strings.TrimSpace(read("VERSION"))
	if !regexp.MustCompile(`^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`).MatchString(version) {
		t.Fatalf("VERSION %q is not a semantic version without v", version)
	}

	// CHANGELOG.md in the Prometheus format: "## x.y.z / YYYY-MM-DD" headings,
	// "* [KIND] text" entries.
	changelog := read("CHANGELOG.md")
	heading := regexp.MustCompile(`(?m)^## (\S+) / (\d{4}-\d{2}-\d{2})$`)
	top := heading.FindStringSubmatch(changelog)
	if top == nil || !strings.HasPrefix(changelog, top[0]) {
		t.Fatalf("CHANGELOG.md does not start with a `## VERSION / YYYY-MM-DD` heading")
	}
	if top[1] != version {
		t.Errorf("CHANGELOG.md's latest entry is %s, VERSION is %s", top[1], version)
	}
	if _, err := time.Parse("2006-01-02", top[2]); err != nil {
		t.Errorf("CHANGELOG.md date %q: %v", top[2], err)
	}
	entry := regexp.MustCompile(`^\* \[(CHANGE|FEATURE|ENHANCEMENT|BUGFIX|SECURITY)\] \S`)
	entries := 0
	for _, line := range strings.Split(changelog, "\n") {
		if strings.HasPrefix(line, "* ") {
			entries++
			if !entry.MatchString(line) {
				t.Errorf("CHANGELOG.md entry %q: want `* [CHANGE|FEATURE|ENHANCEMENT|BUGFIX|SECURITY] text`", line)
			}
		}
	}
	if entries == 0 {
		t.Error("CHANGELOG.md has no entry")
	}

	var chart struct {
		AppVersion string `yaml:"appVersion"`
	}
	if err := yaml.Unmarshal([]byte(read("deploy/helm/indexima-exporter/Chart.yaml")), &chart); err != nil {
		t.Fatal(err)
	}
	if chart.AppVersion != version {
		t.Errorf("the Helm chart's appVersion is %q, VERSION is %q: the chart deploys the exporter's version", chart.AppVersion, version)
	}
}
