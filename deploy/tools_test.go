package deploy

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// repoRoot is the repository root: this package lives in deploy/.
func repoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the test source")
	}
	return filepath.Dir(filepath.Dir(file))
}

// toolsBin is where scripts/install-test-deps.sh puts the pinned Go tools.
func toolsBin() string {
	if dir := os.Getenv("INDEXIMA_TOOLS_BIN"); dir != "" {
		return dir
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".cache", "indexima_exporter", "tools", "bin")
}

// tool returns the path of an external tool: the tools cache first (pinned
// versions), then PATH. Missing, it fails the test in CI (env CI set), where
// scripts/install-test-deps.sh must have installed it, and skips it elsewhere.
func tool(t testing.TB, name string) string {
	t.Helper()
	if dir := toolsBin(); dir != "" {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	msg := name + " not found in " + toolsBin() + " nor PATH; run scripts/install-test-deps.sh"
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// result is what a finished command printed.
type result struct {
	stdout, stderr string
	err            error
}

func (r result) String() string {
	return "stdout:\n" + r.stdout + "\nstderr:\n" + r.stderr
}

// run runs a command in dir with a deadline and returns what it printed.
func run(t testing.TB, timeout time.Duration, dir string, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.WaitDelay = 5 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		err = errors.Join(err, ctx.Err())
	}
	return result{stdout: out.String(), stderr: errb.String(), err: err}
}

// mustRun is run that fails the test when the command fails.
func mustRun(t testing.TB, timeout time.Duration, dir string, name string, args ...string) result {
	t.Helper()
	r := run(t, timeout, dir, name, args...)
	if r.err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), r.err, r)
	}
	return r
}
