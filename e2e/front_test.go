package e2e

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// front is the exporter's address as Prometheus knows it, the same across
// the exporter's restarts: a loopback listener the test holds for its whole
// run, forwarding each connection to the exporter process of the moment
// (which binds a port of its own, a new one at each start).
//
// Restarting the exporter on the address it had would release that port
// while the exporter is down, and a parallel test's listener (any package's)
// could take it: the restarted exporter would then fail to bind, or
// Prometheus would scrape a stranger. While no exporter runs, the front
// accepts and resets each connection, so the scrape fails at once as it
// does against a closed port.
type front struct {
	l    net.Listener
	addr string

	mu      sync.Mutex
	backend string // "" while no exporter runs
	gen     int    // counts the backend's changes
	conns   map[net.Conn]struct{}
	wg      sync.WaitGroup
}

// newFront opens the front; it is closed, with every connection through it,
// at the end of the test.
func newFront(t *testing.T) *front {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &front{l: l, addr: l.Addr().String(), conns: map[net.Conn]struct{}{}}
	f.wg.Add(1)
	go f.serve()
	t.Cleanup(f.close)
	return f
}

// setBackend sends the next connections to addr ("": reset them). Clear it
// before the exporter is stopped: a connection whose dial raced with the
// change is dropped, so none can reach whatever takes the port once the
// exporter has released it.
func (f *front) setBackend(addr string) {
	f.mu.Lock()
	f.backend = addr
	f.gen++
	f.mu.Unlock()
}

func (f *front) serve() {
	defer f.wg.Done()
	for {
		c, err := f.l.Accept()
		if err != nil {
			return // closed
		}
		if !f.track(c) {
			return
		}
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			f.forward(c)
		}()
	}
}

// track records c so that close can end it; false once the front is closed.
func (f *front) track(c net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conns == nil {
		c.Close()
		return false
	}
	f.conns[c] = struct{}{}
	return true
}

func (f *front) untrack(cs ...net.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range cs {
		if f.conns != nil {
			delete(f.conns, c)
		}
		c.Close()
	}
}

func (f *front) forward(c net.Conn) {
	f.mu.Lock()
	backend, gen := f.backend, f.gen
	f.mu.Unlock()
	if backend == "" {
		reset(c)
		f.untrack(c)
		return
	}
	b, err := net.DialTimeout("tcp", backend, 10*time.Second)
	if err != nil {
		reset(c)
		f.untrack(c)
		return
	}
	f.mu.Lock()
	current := f.gen == gen
	f.mu.Unlock()
	if !current || !f.track(b) {
		b.Close()
		reset(c)
		f.untrack(c)
		return
	}
	// Either side closing ends both: HTTP needs no half-close.
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(b, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, b); done <- struct{}{} }()
	<-done
	f.untrack(c, b)
	<-done
}

// reset closes c with a RST: the client's request fails at once, as it
// does against a closed port.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	c.Close()
}

func (f *front) close() {
	f.l.Close()
	f.mu.Lock()
	conns := f.conns
	f.conns = nil
	f.mu.Unlock()
	for c := range conns {
		c.Close()
	}
	f.wg.Wait()
}
