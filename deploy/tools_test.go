package deploy

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// tool returns the path of an external tool (see testkit.Tool: the tools
// cache of scripts/install-test-deps.sh first, then PATH; missing fails in CI).
func tool(t testing.TB, name string) string {
	t.Helper()
	return testkit.Tool(t, name, "scripts/install-test-deps.sh")
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
