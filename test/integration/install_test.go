package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// installCommands are the commands of the README's Install section, each
// with the test that runs it in a fresh clone (package directory, test).
var installCommands = map[string][2]string{
	"go build -o indexima_exporter .": {"test/integration", "TestVersionFromBuildInfo"},
	"go install .":                    {"test/integration", "TestVersionFromBuildInfo"},
	"make release":                    {"scripts/release", "TestRelease"},
	"make image":                      {"deploy", "TestImage"},
	"docker compose -f deploy/docker-compose/docker-compose.yml up --build": {"deploy", "TestComposeCommandFromAFreshClone"},
}

// TestReadmeInstallCommandsAreTested: every command the README's Install
// section gives is one a test runs (installCommands, whose tests must
// exist), and the README promises nothing no command here produces: no
// registry to pull from, no archive to download, no `go install ...@vX.Y.Z`
// of a version not tagged (the Releasing section describes the tag to come).
func TestReadmeInstallCommandsAreTested(t *testing.T) {
	text := readme(t)
	install := section(t, text, "## Install")
	var given []string
	inBlock := false
	for _, line := range strings.Split(install, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "```"):
			inBlock = !inBlock
		case inBlock:
			cmd, _, _ := strings.Cut(trimmed, "#")
			if cmd = strings.Join(strings.Fields(cmd), " "); cmd != "" {
				given = append(given, cmd)
			}
		}
	}
	if len(given) == 0 {
		t.Fatal("the README's Install section gives no command in a code block")
	}
	for _, cmd := range given {
		if _, ok := installCommands[cmd]; !ok {
			t.Errorf("the README's Install section gives %q, which no test runs: add one, and the command to installCommands", cmd)
		}
	}
	for cmd, where := range installCommands {
		if !strings.Contains(install, cmd) {
			t.Errorf("installCommands lists %q, which the README's Install section no longer gives", cmd)
		}
		if !definesTest(t, filepath.Join("..", "..", where[0]), where[1]) {
			t.Errorf("%q: no test %s in %s", cmd, where[1], where[0])
		}
	}

	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`(?i)\b(docker|podman) pull\b`),
		regexp.MustCompile(`(?i)\b(ghcr\.io|quay\.io|docker\.io|hub\.docker\.com)\b`),
		regexp.MustCompile(`releases/download|releases/latest`),
	} {
		if m := re.FindString(text); m != "" {
			t.Errorf("the README says %q: nothing here publishes an image or archives to fetch", m)
		}
	}
	outsideReleasing := strings.Replace(text, section(t, text, "## Releasing"), "", 1)
	for _, m := range regexp.MustCompile(`@(v\d+\.\d+\.\d+)\b`).FindAllStringSubmatch(outsideReleasing, -1) {
		out, err := exec.Command("git", "-C", filepath.Join("..", ".."), "tag", "--list", m[1]).Output()
		if err != nil || strings.TrimSpace(string(out)) != m[1] {
			t.Errorf("the README installs @%s, a version with no tag (%v)", m[1], err)
		}
	}
}

// section is the README's section from heading to the next heading of the
// same level.
func section(t *testing.T, text, heading string) string {
	t.Helper()
	i := strings.Index(text, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("the README has no %q section", heading)
	}
	rest := text[i+1+len(heading):]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// definesTest reports whether a _test.go file of dir defines the test.
func definesTest(t *testing.T, dir, name string) bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "\nfunc "+name+"(t *testing.T) {") {
			return true
		}
	}
	return false
}
