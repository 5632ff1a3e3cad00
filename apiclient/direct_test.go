package apiclient

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// connCounter counts the connections a test server accepted.
type connCounter struct{ n atomic.Int64 }

func (c *connCounter) hook(_ net.Conn, s http.ConnState) {
	if s == http.StateNew {
		c.n.Add(1)
	}
}

func newCountingServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *connCounter) {
	t.Helper()
	cc := &connCounter{}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = cc.hook
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, cc
}

func directFor(t *testing.T) *directTransport {
	t.Helper()
	cfg, err := Config{URL: "http://console.invalid"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	hc, err := newHTTPClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := hc.Transport.(*directTransport)
	if !ok {
		t.Fatalf("transport is %T", hc.Transport)
	}
	t.Cleanup(d.CloseIdleConnections)
	return d
}

// call sends one request and reads its body whole, as the client does.
func call(t *testing.T, rt http.RoundTripper, method, u string) string {
	t.Helper()
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader(`{"name":"x"}`)
	}
	req, err := http.NewRequestWithContext(ctxT(t), method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDirectKeepsConnections: calls one after the other, with bodies of a
// length and chunked, go over one connection.
func TestDirectKeepsConnections(t *testing.T) {
	srv, conns := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("chunked") != "" {
			_, _ = io.WriteString(w, "part one,")
			w.(http.Flusher).Flush() // no Content-Length: chunked
			_, _ = io.WriteString(w, "part two")
			return
		}
		_, _ = io.WriteString(w, "answer to "+r.Method)
	})
	d := directFor(t)
	for i := range 20 {
		method, q, want := http.MethodGet, "", "answer to GET"
		switch i % 3 {
		case 1:
			method, want = http.MethodPost, "answer to POST"
		case 2:
			q, want = "?chunked=1", "part one,part two"
		}
		if got := call(t, d, method, srv.URL+"/x"+q); got != want {
			t.Fatalf("call %d: %q, want %q", i, got, want)
		}
	}
	if n := conns.n.Load(); n != 1 {
		t.Errorf("%d connections for 20 calls, want 1", n)
	}
}

// TestDirectConsoleClosedIdle: a kept connection the console closed while
// idle is not used: the next calls, a POST (which is not sent again after
// a failure) among them, go out on a new connection.
func TestDirectConsoleClosedIdle(t *testing.T) {
	srv, conns := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	})
	d := directFor(t)
	for i, method := range []string{http.MethodGet, http.MethodPost, http.MethodGet} {
		call(t, d, method, srv.URL)
		srv.CloseClientConnections()
		if n := conns.n.Load(); n != int64(i+1) {
			t.Fatalf("after call %d: %d connections, want %d", i, n, i+1)
		}
	}
}

// TestDirectBodyLeftUnread: a body closed before its end closes its
// connection (what is left of it would be read as the next answer).
func TestDirectBodyLeftUnread(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	srv, conns := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/long" {
			_, _ = io.WriteString(w, long)
			return
		}
		_, _ = io.WriteString(w, "short")
	})
	d := directFor(t)
	req, _ := http.NewRequestWithContext(ctxT(t), http.MethodGet, srv.URL+"/long", nil)
	resp, err := d.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if got := call(t, d, http.MethodGet, srv.URL+"/short"); got != "short" {
		t.Fatalf("next call read %.20q", got)
	}
	if n := conns.n.Load(); n != 2 {
		t.Errorf("%d connections, want 2 (the first closed with its body)", n)
	}
}

// TestDirectCancelAndDeadline: a console that does not answer holds a call
// until its context ends, which the error names; the connection is not kept.
func TestDirectCancelAndDeadline(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	srv, conns := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			started <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		_, _ = io.WriteString(w, "ok")
	})
	defer close(release)
	d := directFor(t)

	ctx, cancel := context.WithCancel(ctxT(t))
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/hang", nil)
	errc := make(chan error, 1)
	go func() {
		_, err := d.RoundTrip(req)
		errc <- err
	}()
	<-started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v, want context.Canceled", err)
	}

	ctx, cancel = context.WithTimeout(ctxT(t), 50*time.Millisecond)
	defer cancel()
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/hang", nil)
	if _, err := d.RoundTrip(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("call past its deadline: %v, want context.DeadlineExceeded", err)
	}
	if got := call(t, d, http.MethodGet, srv.URL+"/ok"); got != "ok" {
		t.Fatalf("next call read %q", got)
	}
	if n := conns.n.Load(); n != 3 {
		t.Errorf("%d connections, want 3 (neither cut call's kept)", n)
	}
}

// TestDirectProxyGoesToNetHTTP: a request for a proxy goes to net/http's
// transport, which sends it to the proxy.
func TestDirectProxyGoesToNetHTTP(t *testing.T) {
	var proxied atomic.Int64
	proxy, _ := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.IsAbs() { // a proxy is asked for the absolute URL
			proxied.Add(1)
		}
		_, _ = io.WriteString(w, "via proxy")
	})
	pu, err := url.Parse(proxy.URL)
	if err != nil {
		t.Fatal(err)
	}
	d := directFor(t)
	d.fallback.Proxy = http.ProxyURL(pu)
	if got := call(t, d, http.MethodGet, "http://console.invalid:8082/api/x"); got != "via proxy" {
		t.Fatalf("read %q", got)
	}
	if proxied.Load() != 1 {
		t.Errorf("the proxy saw %d requests for an absolute URL, want 1", proxied.Load())
	}
}

// TestDirectIdleTimeout: a connection idle longer than the idle timeout is
// closed, not used.
func TestDirectIdleTimeout(t *testing.T) {
	srv, conns := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	})
	d := directFor(t)
	now := time.Now()
	d.now = func() time.Time { return now }
	call(t, d, http.MethodGet, srv.URL)
	now = now.Add(d.fallback.IdleConnTimeout + time.Second)
	call(t, d, http.MethodGet, srv.URL)
	if n := conns.n.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

// TestDirectSendsAgainOnlyWhatItCan: a console that closes a kept
// connection on reading a request, without an answer: a GET is sent again
// on a new connection; a POST is not (it may have been acted on).
func TestDirectSendsAgainOnlyWhatItCan(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				// The first request of a connection is answered, the
				// second is met by closing it.
				if _, err := http.ReadRequest(br); err != nil {
					return
				}
				_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				_, _ = http.ReadRequest(br)
			}()
		}
	}()
	d := directFor(t)
	u := "http://" + ln.Addr().String() + "/"
	call(t, d, http.MethodGet, u)
	if got := call(t, d, http.MethodGet, u); got != "ok" {
		t.Fatalf("GET on a connection closed unanswered: %q", got)
	}
	if n := accepted.Load(); n != 2 {
		t.Errorf("%d connections, want 2 (the GET sent again on a new one)", n)
	}
	req, _ := http.NewRequestWithContext(ctxT(t), http.MethodPost, u, strings.NewReader("{}"))
	if resp, err := d.RoundTrip(req); err == nil {
		_ = resp.Body.Close()
		t.Fatal("a POST closed unanswered was sent again")
	}
	if n := accepted.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}
