package integration

import (
	"context"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// TestVersionFromBuildInfo builds the exporter the way a new user does: a
// clone, then `go build` with no linker flags, and `go install .`. Its --version, landing page
// and indexima_exporter_build_info must report the module version and VCS
// revision, time and modified flag that Go stamped into the binary (what
// `go version -m` reads back), not an empty version and "unknown".
//
// The clone (testkit.CloneWorkingTree: the code under test, uncommitted
// changes included) is made because Go stamps VCS information only in a
// checkout whose .git is a directory (not in a `git worktree`), and the
// build sets GOFLAGS=-buildvcs=true because a machine-wide GOFLAGS may turn
// stamping off: the test is about what Go does by default.
func TestVersionFromBuildInfo(t *testing.T) {
	if testing.Short() {
		t.Skip("clones and builds the exporter; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	clone := testkit.CloneWorkingTree(t, ctx)
	head, err := exec.CommandContext(ctx, "git", "-C", clone, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	status, err := exec.CommandContext(ctx, "git", "-C", clone, "status", "--porcelain").Output()
	if err != nil {
		t.Fatal(err)
	}
	wantModified := fmt.Sprint(len(status) > 0)

	build := func(out string) map[string]string {
		t.Helper()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", out, ".")
		cmd.Dir = clone
		cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=true")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build in a clone: %v\n%s", err, b)
		}
		return stampedBuildInfo(t, ctx, out)
	}

	bin := filepath.Join(t.TempDir(), "indexima_exporter")
	stamped := build(bin)
	if stamped["vcs.revision"] != strings.TrimSpace(string(head)) || stamped["vcs.modified"] != wantModified {
		t.Fatalf("go build stamped revision %q modified %q, want %s and %s", stamped["vcs.revision"], stamped["vcs.modified"], head, wantModified)
	}
	wantVersion := strings.TrimPrefix(stamped["mod"], "v")
	if wantVersion == "" || wantVersion == "(devel)" {
		t.Fatalf("go build stamped module version %q: want a real (pseudo-)version", stamped["mod"])
	}
	commit, err := time.Parse(time.RFC3339, stamped["vcs.time"])
	if err != nil {
		t.Fatalf("vcs.time %q: %v", stamped["vcs.time"], err)
	}
	wantRevision := stamped["vcs.revision"]
	if wantModified == "true" {
		wantRevision += "-modified"
	}
	wantDate := commit.UTC().Format("20060102-15:04:05")

	v, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("--version: %v\n%s", err, v)
	}
	for _, want := range []string{
		"indexima_exporter, version " + wantVersion + " ",
		"revision: " + wantRevision + ")",
		"build date:       " + wantDate,
	} {
		if !strings.Contains(string(v), want) {
			t.Errorf("--version lacks %q:\n%s", want, v)
		}
	}

	e := startBinary(t, bin, "--demo")
	_, landing := e.get("/")
	landing = html.UnescapeString(landing)
	for _, want := range []string{"version=" + wantVersion + ",", "revision=" + wantRevision + ")", "date=" + wantDate} {
		if !strings.Contains(landing, want) {
			t.Errorf("landing page lacks %q:\n%s", want, landing)
		}
	}
	fam := e.scrape().families["indexima_exporter_build_info"]
	if len(fam.GetMetric()) != 1 {
		t.Fatalf("want one indexima_exporter_build_info sample, got %v", fam)
	}
	labels := map[string]string{}
	for _, lp := range fam.GetMetric()[0].GetLabel() {
		labels[lp.GetName()] = lp.GetValue()
	}
	if labels["version"] != wantVersion || labels["revision"] != wantRevision {
		t.Errorf("build_info version=%q revision=%q, want %q and %q", labels["version"], labels["revision"], wantVersion, wantRevision)
	}
	e.stop()

	// The README's other way: `go install .` in the clone installs the same
	// stamps as indexima_exporter in GOBIN.
	gobin := t.TempDir()
	install := exec.CommandContext(ctx, "go", "install", ".")
	install.Dir = clone
	install.Env = append(os.Environ(), "GOFLAGS=-buildvcs=true", "GOBIN="+gobin)
	if b, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install . in a clone: %v\n%s", err, b)
	}
	installed := stampedBuildInfo(t, ctx, filepath.Join(gobin, "indexima_exporter"))
	for _, k := range []string{"mod", "vcs.revision", "vcs.modified", "vcs.time"} {
		if installed[k] != stamped[k] {
			t.Errorf("go install . stamped %s=%q, go build %q", k, installed[k], stamped[k])
		}
	}

	// A build with uncommitted changes says so in its revision.
	if err := os.WriteFile(filepath.Join(clone, "README.md"), []byte("changed by TestVersionFromBuildInfo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dirty := filepath.Join(t.TempDir(), "indexima_exporter")
	if s := build(dirty); s["vcs.modified"] != "true" {
		t.Fatalf("go build after editing README.md stamped vcs.modified=%q", s["vcs.modified"])
	}
	v, err = exec.CommandContext(ctx, dirty, "--version").CombinedOutput()
	dirtyRevision := strings.TrimSpace(string(head)) + "-modified"
	if err != nil || !strings.Contains(string(v), "revision: "+dirtyRevision+")") {
		t.Errorf("--version of a build with uncommitted changes (%v), want revision %s:\n%s", err, dirtyRevision, v)
	}
}

// stampedBuildInfo reads, with `go version -m`, the main module's version
// ("mod") and the build settings (vcs.revision, vcs.time, ...) of a binary.
func stampedBuildInfo(t *testing.T, ctx context.Context, bin string) map[string]string {
	t.Helper()
	out, err := exec.CommandContext(ctx, "go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m %s: %v", bin, err)
	}
	stamped := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "mod":
			stamped["mod"] = f[2]
		case len(f) >= 2 && f[0] == "build":
			if k, v, ok := strings.Cut(f[1], "="); ok {
				stamped[k] = v
			}
		}
	}
	return stamped
}
