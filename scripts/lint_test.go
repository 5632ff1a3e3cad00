package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runLint runs scripts/lint.sh with INDEXIMA_TOOLS_BIN=toolsBin, PATH=path
// and CI set or not; it returns the output and exit status.
func runLint(t *testing.T, toolsBin, path string, ci bool) (string, int) {
	t.Helper()
	return runScript(t, "lint.sh", time.Minute, map[string]string{"INDEXIMA_TOOLS_BIN": toolsBin, "PATH": path}, ci)
}

// pathWith returns a directory holding links to the named commands only,
// for a PATH in which golangci-lint surely is not.
func pathWith(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		p, err := exec.LookPath(n)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Without golangci-lint the lint fails under CI, naming where it looked and
// what installs it, and is skipped with a note elsewhere.
func TestLintMissingTool(t *testing.T) {
	empty := t.TempDir()
	path := pathWith(t, "dirname")
	out, code := runLint(t, empty, path, true)
	if code == 0 || !strings.Contains(out, "FAIL: golangci-lint not found in "+empty) || !strings.Contains(out, "make test-deps") {
		t.Fatalf("CI without golangci-lint: exit %d, want a failure naming %s and make test-deps:\n%s", code, empty, out)
	}
	out, code = runLint(t, empty, path, false)
	if code != 0 || !strings.Contains(out, "skipped") {
		t.Fatalf("no golangci-lint outside CI: exit %d, want a skip:\n%s", code, out)
	}
}

// A golangci-lint that is not the pinned version (here a script, which
// records no module version) fails under CI before it runs, since its
// findings could differ; elsewhere it runs, with a note.
func TestLintOtherVersion(t *testing.T) {
	tools := t.TempDir()
	fake := "#!/bin/sh\necho fake golangci-lint ran \"$@\"\n"
	if err := os.WriteFile(filepath.Join(tools, "golangci-lint"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	path := pathWith(t, "dirname", "go", "awk")
	out, code := runLint(t, tools, path, true)
	if code == 0 || !strings.Contains(out, "not v2.15.0") || strings.Contains(out, "fake golangci-lint ran") {
		t.Fatalf("CI with another golangci-lint: exit %d, want a failure before it runs:\n%s", code, out)
	}
	out, code = runLint(t, tools, path, false)
	if code != 0 || !strings.Contains(out, "note:") || !strings.Contains(out, "fake golangci-lint ran run ./...") {
		t.Fatalf("another golangci-lint outside CI: exit %d, want it run with a note:\n%s", code, out)
	}
}
