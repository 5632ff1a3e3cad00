package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// TestVersionsAgree: the version being prepared is written in three places
// that must agree: VERSION (what make release and make image stamp), the
// Helm chart's appVersion (the default image tag of the chart), and
// CHANGELOG.md. Until a release is made, CHANGELOG.md's top entry is
// "## Unreleased" and VERSION is the version that release will carry: one
// no entry below was released as, and above each of them. When it is made,
// the top entry becomes "## VERSION / YYYY-MM-DD", the release's day, which
// cannot be a day still to come.
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
	// "* [KIND] text" entries; "## Unreleased" on top until a release is made.
	changelog := read("CHANGELOG.md")
	for _, p := range changelogTopProblems(changelog, version, time.Now()) {
		t.Error(p)
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

// released is a release heading of CHANGELOG.md.
var released = regexp.MustCompile(`(?m)^## (\S+) / (\d{4}-\d{2}-\d{2})$`)

// changelogTopProblems says what is wrong with CHANGELOG.md's top entry
// against VERSION on day now (see TestVersionsAgree).
func changelogTopProblems(changelog, version string, now time.Time) []string {
	var problems []string
	first, _, _ := strings.Cut(changelog, "\n")
	if first == "## Unreleased" {
		for _, m := range released.FindAllStringSubmatch(changelog, -1) {
			switch c := compareVersions(version, m[1]); {
			case c == 0:
				problems = append(problems, fmt.Sprintf("VERSION %s was released already (CHANGELOG.md: %s): set VERSION to the version the unreleased changes will carry", version, m[0]))
			case c < 0:
				problems = append(problems, fmt.Sprintf("VERSION %s is below the released %s (CHANGELOG.md): set it to the version the unreleased changes will carry", version, m[1]))
			}
		}
		return problems
	}
	m := released.FindStringSubmatch(first)
	if m == nil {
		return []string{fmt.Sprintf("CHANGELOG.md starts with %q: want `## Unreleased`, or `## VERSION / YYYY-MM-DD` once released", first)}
	}
	if m[1] != version {
		problems = append(problems, fmt.Sprintf("CHANGELOG.md's latest release is %s, VERSION is %s", m[1], version))
	}
	day, err := time.Parse("2006-01-02", m[2])
	if err != nil {
		return append(problems, fmt.Sprintf("CHANGELOG.md date %q: %v", m[2], err))
	}
	// A day of slack: the release's day where it was made may be tomorrow in UTC.
	if day.After(now.UTC().AddDate(0, 0, 1)) {
		problems = append(problems, fmt.Sprintf("CHANGELOG.md dates %s to %s, a day still to come: a release is dated the day it is made; until then the entry is `## Unreleased`", m[1], m[2]))
	}
	return problems
}

// TestChangelogTopRules: what TestVersionsAgree accepts and refuses of the
// top entry, on made-up changelogs.
func TestChangelogTopRules(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	const body = "\n\n* [FEATURE] Something.\n"
	for _, c := range []struct {
		name, changelog, version string
		ok                       bool
	}{
		{"unreleased first version", "## Unreleased" + body, "0.1.0", true},
		{"unreleased next version", "## Unreleased" + body + "\n## 0.1.0 / 2026-11-20" + body, "0.2.0", true},
		{"unreleased, VERSION released already", "## Unreleased" + body + "\n## 0.1.0 / 2026-11-20" + body, "0.1.0", false},
		{"unreleased, VERSION below a release", "## Unreleased" + body + "\n## 0.10.0 / 2026-11-20" + body, "0.9.0", false},
		{"released today", "## 0.1.0 / 2026-11-27" + body, "0.1.0", true},
		{"released, another VERSION", "## 0.1.0 / 2026-11-27" + body, "0.2.0", false},
		{"dated to a day to come", "## 0.1.0 / 2026-11-30" + body, "0.1.0", false},
		{"no heading", "# Changelog" + body, "0.1.0", false},
	} {
		problems := changelogTopProblems(c.changelog, c.version, now)
		if c.ok != (len(problems) == 0) {
			t.Errorf("%s: problems %q, want ok=%v", c.name, problems, c.ok)
		}
	}
}

// compareVersions compares x.y.z versions numerically (-1, 0, 1); a
// pre-release (x.y.z-rc.1) comes before x.y.z.
func compareVersions(a, b string) int {
	coreA, preA, _ := strings.Cut(a, "-")
	coreB, preB, _ := strings.Cut(b, "-")
	pa, pb := strings.Split(coreA, "."), strings.Split(coreB, ".")
	for i := 0; i < len(pa) || i < len(pb); i++ {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	switch {
	case preA == preB:
		return 0
	case preA == "":
		return 1
	case preB == "":
		return -1
	case preA < preB:
		return -1
	}
	return 1
}
