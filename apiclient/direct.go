package apiclient

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"time"
)

// directTransport sends HTTP/1.1 requests to the console on the caller's
// goroutine, over connections it keeps between scrapes.
//
// Why not net/http's Transport for every call: it runs two goroutines per
// connection (one reading, one writing) and hands each request and answer
// between them and the caller over channels. On a large fleet nearly every
// poll is two calls answering a few bytes, and those hand-offs are a large
// share of a poll's CPU; the two goroutines and their buffers are also most
// of what a kept connection costs, which bounds how many nodes can be
// polled at once (docs/performance.md measures both). Here an idle
// connection is its socket alone, and a call is a write and a read on it.
// The requests are written by net/http's Request.Write and the answers read
// by its ReadResponse, within the bounds of heads.go;
// FuzzDirectTransportAsNetHTTP compares this transport with net/http's.
//
// What it does not do goes to fallback, net/http's Transport (viaNetHTTP):
// requests through a proxy (HTTP_PROXY and friends), schemes other than
// http and https, and HTTP/2. Over TLS it offers h2 and http/1.1 in ALPN,
// as net/http does; a console that picks h2 (an HTTP/2-only load balancer
// or ingress, or one that prefers it) is left to net/http from then on,
// which speaks HTTP/2 itself. The connections that learnt it are closed:
// the calls under way when it is learnt (at first contact, every node polled
// at once) cost one handshake more each, once per console and process.
type directTransport struct {
	// fallback takes what this transport does not, and holds the settings
	// both share: the proxy function, the dialer, the TLS configuration,
	// the idle connections kept per console (MaxIdleConnsPerHost) and how
	// long (IdleConnTimeout).
	fallback *http.Transport
	now      func() time.Time

	mu   sync.Mutex
	idle map[string][]*directConn // by scheme and address; newest last
	// h2 holds the consoles (by scheme and address) that picked h2 in
	// ALPN: their calls go to fallback. A console that answers HTTP/1
	// there again (its front replaced) comes back to this transport.
	h2 map[string]bool
}

// directConn is one kept connection.
type directConn struct {
	conn      net.Conn // the TLS connection for https
	raw       net.Conn // the TCP connection beneath, to tell a closed idle one
	key       string
	idleSince time.Time
	reused    bool
	// in is conn as the answers are read: bounded while heads are read.
	in headLimit
}

// readerPool holds the bufio.Readers of the calls under way: an idle
// connection keeps none (a response is read whole before its connection
// goes back, so nothing is left buffered). They are small: they hold an
// answer's head, and its body is read through the body's own buffer.
var (
	readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 1<<10) }}
	writerPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 1<<10) }}
)

// peekAfter is the idle time after which a kept connection is looked at
// before a request that can be sent again goes out on it (one system call).
const peekAfter = time.Second

// aLongTimeAgo is a deadline in the past: it makes a blocked read or write
// return at once (how a call is cancelled).
var aLongTimeAgo = time.Unix(1, 0)

func (t *directTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.handles(req) {
		return t.viaNetHTTP(req)
	}
	key := req.URL.Scheme + "://" + canonicalAddr(req)
	if t.speaksH2(key) {
		return t.viaHTTP2(req, key)
	}
	for attempt := 0; ; attempt++ {
		dc, err := t.conn(req.Context(), req, key)
		if errors.Is(err, errPickedH2) {
			return t.viaHTTP2(req, key)
		}
		if err != nil {
			closeBody(req)
			return nil, err
		}
		resp, err := t.exchange(req, dc)
		if err == nil {
			return resp, nil
		}
		// A kept connection the console closed while it was idle fails
		// before any byte of an answer: the request never reached the
		// console, and is sent again once on a new connection (as net/http
		// does), when it can be.
		var ne *notAnswered
		if attempt == 0 && dc.reused && errors.As(err, &ne) && replayable(req) && req.Context().Err() == nil {
			continue
		}
		closeBody(req)
		return nil, err
	}
}

// viaHTTP2 sends req to a console that picked h2 through net/http; an
// answer in HTTP/1 tells that it no longer speaks HTTP/2, and its next
// calls come back here.
func (t *directTransport) viaHTTP2(req *http.Request, key string) (*http.Response, error) {
	resp, err := t.viaNetHTTP(req)
	if err == nil && resp.ProtoMajor == 1 {
		t.mu.Lock()
		delete(t.h2, key)
		t.mu.Unlock()
	}
	return resp, err
}

func (t *directTransport) speaksH2(key string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.h2[key]
}

// handles tells the requests this transport takes: plain http and https
// with no proxy in between.
func (t *directTransport) handles(req *http.Request) bool {
	switch req.URL.Scheme {
	case "http":
	case "https":
		if t.fallback.TLSClientConfig == nil {
			return false
		}
	default:
		return false
	}
	if proxy := t.fallback.Proxy; proxy != nil {
		if p, err := proxy(req); err != nil || p != nil {
			return false
		}
	}
	return true
}

// replayable: a request that can be sent again as it is: idempotent, and
// with no body (written once, a body is gone).
func replayable(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return req.Body == nil || req.Body == http.NoBody
	}
	return false
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// canonicalAddr is the request's host and port, the port defaulted by scheme.
func canonicalAddr(req *http.Request) string {
	host, port := req.URL.Hostname(), req.URL.Port()
	if port == "" {
		port = "80"
		if req.URL.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(host, port)
}

// conn returns a kept connection to key that is still open, or a new one.
func (t *directTransport) conn(ctx context.Context, req *http.Request, key string) (*directConn, error) {
	now := t.now()
	for {
		dc := t.takeIdle(key)
		if dc == nil {
			break
		}
		idle := now.Sub(dc.idleSince)
		// A connection used an instant ago (a poll's second call) is not
		// looked at: a console that closed it since is met by sending the
		// request again, which only requests that can be sent again risk.
		if idle <= t.fallback.IdleConnTimeout && (idle < peekAfter && replayable(req) || stillOpen(dc.raw)) {
			dc.reused = true
			return dc, nil
		}
		_ = dc.conn.Close()
	}
	return t.dialConn(ctx, req, key)
}

func (t *directTransport) takeIdle(key string) *directConn {
	t.mu.Lock()
	defer t.mu.Unlock()
	list := t.idle[key]
	if len(list) == 0 {
		return nil
	}
	dc := list[len(list)-1]
	list[len(list)-1] = nil
	t.idle[key] = list[:len(list)-1]
	return dc
}

// putIdle keeps dc for the next call, unless the fallback's
// MaxIdleConnsPerHost are kept already.
func (t *directTransport) putIdle(dc *directConn) {
	dc.idleSince = t.now()
	t.mu.Lock()
	list := t.idle[dc.key]
	if len(list) < t.fallback.MaxIdleConnsPerHost {
		if t.idle == nil {
			t.idle = make(map[string][]*directConn)
		}
		t.idle[dc.key] = append(list, dc)
		dc = nil
	}
	t.mu.Unlock()
	if dc != nil {
		_ = dc.conn.Close()
	}
}

// errPickedH2 is a console that picked h2 in ALPN: the call goes to
// net/http.
var errPickedH2 = errors.New("the console picked h2")

// CloseIdleConnections closes the kept connections, and net/http's.
func (t *directTransport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, list := range idle {
		for _, dc := range list {
			_ = dc.conn.Close()
		}
	}
	t.fallback.CloseIdleConnections()
}

func (t *directTransport) dialConn(ctx context.Context, req *http.Request, key string) (*directConn, error) {
	addr := canonicalAddr(req)
	raw, err := t.fallback.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	dc := &directConn{conn: raw, raw: raw, key: key}
	if req.URL.Scheme == "https" {
		cfg := t.fallback.TLSClientConfig.Clone()
		if cfg.ServerName == "" {
			cfg.ServerName = req.URL.Hostname()
		}
		cfg.NextProtos = []string{"h2", "http/1.1"}
		tc := tls.Client(raw, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = raw.Close()
			return nil, err
		}
		if tc.ConnectionState().NegotiatedProtocol == "h2" {
			_ = tc.Close()
			t.mu.Lock()
			if t.h2 == nil {
				t.h2 = make(map[string]bool)
			}
			t.h2[key] = true
			t.mu.Unlock()
			return nil, errPickedH2
		}
		dc.conn = tc
	}
	return dc, nil
}

// notAnswered is an error met before any byte of the answer was read.
type notAnswered struct{ err error }

func (e *notAnswered) Error() string { return e.err.Error() }
func (e *notAnswered) Unwrap() error { return e.err }

// exchange writes req on dc and reads the answer's head; the body is read
// by the caller, and dc goes back to the kept ones when it was read whole.
func (t *directTransport) exchange(req *http.Request, dc *directConn) (*http.Response, error) {
	ctx := req.Context()
	// The context's end (its deadline included) cuts the exchange, so
	// that the error is the context's when it ends (not a socket deadline
	// that may fire first).
	stop := context.AfterFunc(ctx, func() { _ = dc.conn.SetDeadline(aLongTimeAgo) })
	fail := func(err error) (*http.Response, error) {
		stop()
		_ = dc.conn.Close()
		if ctxErr := ctx.Err(); ctxErr != nil {
			// Name the cause, as net/http does, rather than a deadline
			// error of the socket.
			return nil, ctxErr
		}
		return nil, err
	}

	w := writerPool.Get().(*bufio.Writer)
	w.Reset(dc.conn)
	err := req.Write(w)
	if err == nil {
		err = w.Flush()
	}
	w.Reset(nil)
	writerPool.Put(w)
	if err != nil {
		return fail(&notAnswered{err})
	}
	if trace := httptrace.ContextClientTrace(ctx); trace != nil && trace.WroteRequest != nil {
		trace.WroteRequest(httptrace.WroteRequestInfo{})
	}

	dc.in = headLimit{conn: dc.conn, left: maxHeadBytes}
	r := readerPool.Get().(*bufio.Reader)
	r.Reset(&dc.in)
	if _, err = r.Peek(1); err != nil {
		// Closed (or reset) before the first byte of the answer.
		r.Reset(nil)
		readerPool.Put(r)
		return fail(&notAnswered{err})
	}
	resp, err := readHeads(r, req, &dc.in)
	if err != nil {
		r.Reset(nil)
		readerPool.Put(r)
		return fail(err)
	}
	dc.in.left = math.MaxInt64 // the body's bound is the caller's
	resp.Body = &directBody{rc: resp.Body, t: t, dc: dc, r: r, stop: stop,
		keep: !resp.Close && resp.ProtoAtLeast(1, 1) && resp.StatusCode != http.StatusSwitchingProtocols}
	return resp, nil
}

// directBody is an answer's body: read whole and closed, its connection is
// kept; closed before its end, the connection is closed (the rest of the
// answer would be read by the next call).
type directBody struct {
	rc   io.ReadCloser
	t    *directTransport
	dc   *directConn
	r    *bufio.Reader
	stop func() bool
	keep bool // the console keeps the connection open after this answer
	eof  bool
	done bool
}

func (b *directBody) Read(p []byte) (int, error) {
	if b.done {
		return 0, errors.New("read on a closed body")
	}
	n, err := b.rc.Read(p)
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

func (b *directBody) Close() error {
	if b.done {
		return nil
	}
	b.done = true
	timely := b.stop()
	keep := b.keep && b.eof && timely && b.r.Buffered() == 0 && b.dc.conn.SetDeadline(time.Time{}) == nil
	if !keep {
		// Closed first: the body's Close would otherwise read the rest
		// of the answer, however long, to find its end.
		_ = b.dc.conn.Close()
	}
	_ = b.rc.Close()
	b.r.Reset(nil)
	readerPool.Put(b.r)
	if keep {
		b.t.putIdle(b.dc)
	}
	return nil
}
