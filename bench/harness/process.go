package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is a server the harness started: the exporter or json_exporter.
type process struct {
	name string
	cmd  *exec.Cmd
	addr string // 127.0.0.1:port
	out  *tailBuffer
	done chan struct{}
	err  error
}

// tailBuffer keeps the last bytes a process wrote, for error messages.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

const tailBytes = 4096

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailBytes {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailBytes:]...)
	}
	t.mu.Unlock()
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// startProcess runs bin with args plus the listen flag and waits until
// readyPath answers 200, within timeout.
func startProcess(name, bin string, args []string, listenFlag, readyPath string, timeout time.Duration) (*process, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	p := &process{name: name, addr: addr, out: &tailBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, append(args, listenFlag+"="+addr)...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	deadline := time.Now().Add(timeout)
	client := &http.Client{Timeout: time.Second}
	for attempt := 0; ; attempt++ {
		select {
		case <-p.done:
			return nil, fmt.Errorf("%s exited before it was ready (%v): %s", name, p.err, p.out)
		default:
		}
		resp, err := client.Get("http://" + addr + readyPath)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("%s not ready at %s%s within %s: %s", name, addr, readyPath, timeout, p.out)
		}
		time.Sleep(time.Duration(min(attempt+1, 10)) * 10 * time.Millisecond)
	}
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// stop ends the process (SIGTERM, then SIGKILL after 5 s) and waits for it.
func (p *process) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// get fetches path from the process and returns the body and how long the
// whole exchange took.
func (p *process) get(ctx context.Context, client *http.Client, path string) ([]byte, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.addr+path, nil)
	if err != nil {
		return nil, 0, err
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("%s %s: %w", p.name, path, err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, err = io.Copy(&b, resp.Body)
	d := time.Since(start)
	if err != nil {
		return nil, d, fmt.Errorf("%s %s: reading: %w", p.name, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return b.Bytes(), d, fmt.Errorf("%s %s: status %d: %.300s", p.name, path, resp.StatusCode, b.String())
	}
	return b.Bytes(), d, nil
}

var errNoBinary = errors.New("binary not available")
