package scripts

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// runScript runs the script name of this directory with bash, within
// timeout, in this process's environment with the variables of env (and
// CI=true when ci) replacing those it has (and CI removed when not ci);
// it returns the output and the exit status.
func runScript(t *testing.T, name string, timeout time.Duration, env map[string]string, ci bool) (string, int) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, bash, filepath.Join(filepath.Dir(file), name))
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, set := env[k]; !set && k != "CI" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if ci {
		cmd.Env = append(cmd.Env, "CI=true")
	}
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s did not finish in time:\n%s", name, out.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out.String(), code
}
