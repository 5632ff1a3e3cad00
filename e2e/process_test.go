package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/child"
	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// process is a child process whose output is kept for the test log.
type process struct {
	*child.Process
	out *testkit.SyncBuffer
}

// startProcess starts bin; it is killed at the end of the test, and its
// output is logged when the test failed.
func startProcess(t *testing.T, name, bin string, args ...string) *process {
	t.Helper()
	p := &process{out: &testkit.SyncBuffer{}}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = p.out, p.out
	var err error
	if p.Process, err = child.Start(name, cmd); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			out := p.out.String()
			if len(out) > 16<<10 {
				out = "...\n" + out[len(out)-16<<10:]
			}
			t.Logf("output of %s:\n%s", name, out)
		}
	})
	return p
}

// listening waits until the process logged the address it bound (started
// with its listen address on port 0, it picks a port no other test can
// take) and returns it; it fails the test if the process ends first or
// within passes.
func (p *process) listening(t *testing.T, within time.Duration) string {
	t.Helper()
	addr, err := testkit.WaitListening(p.out.String, p.Done(), within)
	if err != nil {
		if p.Exited() {
			t.Fatalf("%s: %v (exit: %v)", p.Name, err, p.Err())
		}
		t.Fatalf("%s: %v", p.Name, err)
	}
	return addr
}

// kill sends SIGKILL (a crash: nothing is flushed) and waits for the exit.
func (p *process) kill(t *testing.T) {
	t.Helper()
	if !p.Kill(10 * time.Second) {
		t.Fatalf("%s did not exit within 10s of SIGKILL", p.Name)
	}
}

// stop asks the process to end (SIGTERM), then kills it after 10s.
func (p *process) stop() { p.Stop(10 * time.Second) }

// waitReady polls url until it answers 200, failing early if the process exits.
func waitReady(t *testing.T, p *process, url string, timeout time.Duration) {
	t.Helper()
	var last string
	eventually(t, timeout, p.Name+" ready at "+url, func() bool {
		if p.Exited() {
			t.Fatalf("%s exited before being ready: %v\n%s", p.Name, p.Err(), p.out.String())
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			last = err.Error()
			return false
		}
		resp.Body.Close()
		last = resp.Status
		return resp.StatusCode == http.StatusOK
	}, func() string { return last })
}

// eventually polls cond every 200ms until it holds, or fails the test after
// timeout with what and the detail of the last attempt.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool, detail func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for attempt := 0; ; attempt++ {
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			msg := fmt.Sprintf("timed out after %s (%d attempts) waiting for %s", timeout, attempt+1, what)
			if detail != nil {
				msg += ": " + detail()
			}
			t.Fatal(msg)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestMain removes the exporter binary built for the tests.
func TestMain(m *testing.M) { testkit.Main(m) }
