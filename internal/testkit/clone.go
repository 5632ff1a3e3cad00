package testkit

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// RepoRoot is the repository's root directory (this file is in internal/testkit).
func RepoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the test source")
	}
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

// CloneWorkingTree makes a fresh `git clone` of the repository in a
// temporary directory, then copies the working tree over it (tracked files
// and the untracked ones git does not ignore, deleted files removed): a
// checkout of its own, as a new user gets, holding exactly the code under
// test, uncommitted changes included (git then sees them as modifications).
// It skips the test when the repository is no git checkout (a source
// archive), where there is nothing to clone.
func CloneWorkingTree(t testing.TB, ctx context.Context) string {
	t.Helper()
	repo := RepoRoot(t)
	if err := exec.CommandContext(ctx, "git", "-C", repo, "rev-parse", "HEAD").Run(); err != nil {
		t.Skipf("%s is not a git checkout (%v): nothing to clone", repo, err)
	}
	clone := filepath.Join(t.TempDir(), "src")
	if out, err := exec.CommandContext(ctx, "git", "clone", "--quiet", repo, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	out, err := exec.CommandContext(ctx, "git", "-C", repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, rel := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if rel == "" {
			continue
		}
		src, dst := filepath.Join(repo, rel), filepath.Join(clone, rel)
		fi, err := os.Lstat(src)
		if os.IsNotExist(err) {
			os.Remove(dst)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		os.Remove(dst)
		if fi.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, dst); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return clone
}
