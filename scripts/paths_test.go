package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// Nothing in the repository points outside it: a clone made anywhere must
// not depend on the files our machines keep beside it (the console's
// specification, the conformance suite, the vulnerability database), and a
// reader must not be sent to them. Every tracked file is searched for the
// paths those were once named by.
func TestNoPathOutsideTheRepository(t *testing.T) {
	root := testkit.RepoRoot(t)
	out, err := exec.Command("git", "-C", root, "ls-files").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	shared := "shared" + "/" // split, so that this file does not match itself
	outside := []string{"../" + shared, shared + "spec", shared + "conformance", shared + "vulndb", "/" + "work/"}
	files := strings.Fields(string(out))
	if len(files) < 100 {
		t.Fatalf("git ls-files listed %d files", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, p := range outside {
				if strings.Contains(line, p) {
					t.Errorf("%s:%d names %q, outside the repository: %s", f, i+1, p, strings.TrimSpace(line))
				}
			}
		}
	}
}
