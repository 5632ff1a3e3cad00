package harness

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/child"
)

// process is a server the harness started: the exporter or json_exporter.
type process struct {
	*child.Process
	addr string // 127.0.0.1:port
	out  *tailBuffer
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

// listenWatch passes a process's output on to its tailBuffer and reads each
// whole line as it goes by, until one tells the address the process bound:
// the tail alone may have dropped that line by the time it is read.
type listenWatch struct {
	out   *tailBuffer
	mu    sync.Mutex
	line  []byte // the incomplete last line
	addr  string
	found chan struct{} // closed once addr is set
}

func newListenWatch(out *tailBuffer) *listenWatch {
	return &listenWatch{out: out, found: make(chan struct{})}
}

func (w *listenWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	if w.addr == "" {
		w.line = append(w.line, p...)
		for {
			i := bytes.IndexByte(w.line, '\n')
			if i < 0 {
				break
			}
			if addr, ok := child.ListeningAddress(string(w.line[:i])); ok {
				w.addr = addr
				w.line = nil
				close(w.found)
				break
			}
			w.line = w.line[i+1:]
		}
	}
	w.mu.Unlock()
	return w.out.Write(p)
}

func (w *listenWatch) address() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.addr
}

// startProcess runs bin with args plus the listen flag set to 127.0.0.1:0,
// reads the address it bound from its log and waits until readyPath answers
// 200, all within timeout. The process binds a port of its own: a port found
// free beforehand (listen on :0, close, hand it over) could be taken by
// another process before it binds it.
func startProcess(name, bin string, args []string, listenFlag, readyPath string, timeout time.Duration) (*process, error) {
	p := &process{out: &tailBuffer{}}
	watch := newListenWatch(p.out)
	cmd := exec.Command(bin, append(args, listenFlag+"=127.0.0.1:0")...)
	cmd.Stdout, cmd.Stderr = watch, watch
	var err error
	if p.Process, err = child.Start(name, cmd); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	deadline := time.Now().Add(timeout)
	listening := time.NewTimer(timeout)
	select {
	case <-watch.found:
		listening.Stop()
		p.addr = watch.address()
	case <-p.Done():
		listening.Stop()
		return nil, fmt.Errorf("%s exited before it was listening (%v): %s", name, p.Err(), p.out)
	case <-listening.C:
		p.stop()
		return nil, fmt.Errorf("%s logged no \"Listening on\" line within %s: %s", name, timeout, p.out)
	}
	client := &http.Client{Timeout: time.Second}
	for attempt := 0; ; attempt++ {
		if p.Exited() {
			return nil, fmt.Errorf("%s exited before it was ready (%v): %s", name, p.Err(), p.out)
		}
		resp, err := client.Get("http://" + p.addr + readyPath)
		if err == nil {
			// Drained so the connection is reused; the status decides.
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("%s not ready at %s%s within %s: %s", name, p.addr, readyPath, timeout, p.out)
		}
		time.Sleep(time.Duration(min(attempt+1, 10)) * 10 * time.Millisecond)
	}
}

func (p *process) pid() int { return p.Pid() }

// stop ends the process (SIGTERM, then SIGKILL after 5 s) and waits for it.
func (p *process) stop() { p.Stop(5 * time.Second) }

// get fetches path from the process and returns the body and how long the
// whole exchange took.
func (p *process) get(ctx context.Context, client *http.Client, path string) ([]byte, time.Duration, error) {
	var b bytes.Buffer
	d, err := p.getInto(ctx, client, path, &b)
	return b.Bytes(), d, err
}

// getInto is get reading the answer into b, which it resets first: a
// scraper that keeps its buffer from one scrape to the next, as
// Prometheus's scrape loop does (a pool of buffers sized by the previous
// scrape), so that the time measured is not the growth of a buffer from
// nothing to the size of the whole exposition (tens of MB at 2000 nodes).
func (p *process) getInto(ctx context.Context, client *http.Client, path string, b *bytes.Buffer) (time.Duration, error) {
	b.Reset()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.addr+path, nil)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", p.Name, path, err)
	}
	defer resp.Body.Close()
	_, err = io.Copy(b, resp.Body)
	d := time.Since(start)
	if err != nil {
		return d, fmt.Errorf("%s %s: reading: %w", p.Name, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return d, fmt.Errorf("%s %s: status %d: %.300s", p.Name, path, resp.StatusCode, b.String())
	}
	return d, nil
}
