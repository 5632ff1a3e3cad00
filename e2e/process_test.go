package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// process is a child process whose output is kept for the test log.
type process struct {
	name string
	cmd  *exec.Cmd
	out  *testkit.SyncBuffer
	done chan struct{}
	err  error // valid once done is closed
}

// startProcess starts bin; it is killed at the end of the test, and its
// output is logged when the test failed.
func startProcess(t *testing.T, name, bin string, args ...string) *process {
	t.Helper()
	p := &process{name: name, cmd: exec.Command(bin, args...), out: &testkit.SyncBuffer{}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.stop(t)
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
	addr, err := testkit.WaitListening(p.out.String, p.done, within)
	if err != nil {
		if p.exited() {
			t.Fatalf("%s: %v (exit: %v)", p.name, err, p.err)
		}
		t.Fatalf("%s: %v", p.name, err)
	}
	return addr
}

// kill sends SIGKILL (a crash: nothing is flushed) and waits for the exit.
func (p *process) kill(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not exit within 10s of SIGKILL", p.name)
	}
}

// stop asks the process to end (SIGTERM), then kills it after 10s.
func (p *process) stop(t *testing.T) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitReady polls url until it answers 200, failing early if the process exits.
func waitReady(t *testing.T, p *process, url string, timeout time.Duration) {
	t.Helper()
	var last string
	eventually(t, timeout, p.name+" ready at "+url, func() bool {
		if p.exited() {
			t.Fatalf("%s exited before being ready: %v\n%s", p.name, p.err, p.out.String())
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
