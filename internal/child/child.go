// Package child runs a server as a child process for the tests and the load
// harness (the exporter, json_exporter, Prometheus): started with its
// output where the caller wants it, waited for in the background, and
// ended cleanly (SIGTERM, then SIGKILL) or as a crash (SIGKILL). It is no
// test package: bench/harness, which is a program's, uses it too.
package child

import (
	"os/exec"
	"regexp"
	"syscall"
	"time"
)

// Process is a started child process.
type Process struct {
	Name string
	Cmd  *exec.Cmd
	done chan struct{}
	err  error // the exit status, once done is closed
}

// Start starts cmd (its output set by the caller) and waits for its exit in
// the background.
func Start(name string, cmd *exec.Cmd) (*Process, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{Name: name, Cmd: cmd, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	return p, nil
}

// Done is closed once the process exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is the exit status once Done is closed, nil before.
func (p *Process) Err() error {
	if !p.Exited() {
		return nil
	}
	return p.err
}

// Exited tells whether the process ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Pid is the process's id.
func (p *Process) Pid() int { return p.Cmd.Process.Pid }

// Stop asks the process to end (SIGTERM), kills it if it has not within
// grace, and waits for its exit.
func (p *Process) Stop(grace time.Duration) {
	if p.Exited() {
		return
	}
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		_ = p.Cmd.Process.Kill()
		<-p.done
	}
}

// Kill ends the process at once, as a crash would (nothing is flushed),
// and waits for its exit within wait; ok is false if it did not exit.
func (p *Process) Kill(wait time.Duration) (ok bool) {
	_ = p.Cmd.Process.Kill()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}

// listeningRE matches the line exporter-toolkit's web.Serve logs (logfmt)
// with the address its listener really bound: `msg="Listening on"
// address=127.0.0.1:PORT`, other fields possibly between (Prometheus 3 puts
// component=web there). The exporter, Prometheus 2 and 3, Alertmanager and
// json_exporter all serve through it.
var listeningRE = regexp.MustCompile(`msg="Listening on"[^\n]*? address="?([^"\s]+)`)

// ListeningAddress returns the address in the first "Listening on" line of
// log, if any. A server started with its listen address on port 0 tells
// the port it bound this way: a port found free beforehand (listen on :0,
// close, hand it over) could be taken by another process before it binds
// it; the port it bound itself is its own.
func ListeningAddress(log string) (string, bool) {
	m := listeningRE.FindStringSubmatch(log)
	if m == nil {
		return "", false
	}
	return m[1], true
}
