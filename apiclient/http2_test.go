package apiclient

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/internal/testca"
)

// consoleCert is a private CA and a certificate of it for 127.0.0.1.
func consoleCert(t *testing.T) (*testca.CA, tls.Certificate) {
	t.Helper()
	dir := t.TempDir()
	ca, err := testca.New(dir, "console")
	if err != nil {
		t.Fatal(err)
	}
	is, err := ca.Issue(dir, "console", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return ca, is.Pair
}

// tlsSim starts the simulator over HTTPS offering protos in ALPN, and a
// client that trusts it.
func tlsSim(t *testing.T, protos ...string) (*simulator.Simulator, testClient) {
	t.Helper()
	ca, cert := consoleCert(t)
	sim, _ := newSim(t, func(cfg *simulator.Config) {
		cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: protos}
	})
	return sim, newClient(t, sim.URL(), func(c *Config) { c.TLS.CAFile = ca.File })
}

// A console over TLS is spoken to in HTTP/2 when it picks h2 (an
// HTTP/2-only front refuses HTTP/1.1 in the handshake), in HTTP/1.1
// otherwise; either way every call is answered, a poll's calls go over
// kept connections, and logging in once is enough.
func TestConsoleProtocolsOverTLS(t *testing.T) {
	for _, tc := range []struct {
		offered []string
		proto   string
		conns   int // the direct transport's connection, plus net/http's for HTTP/2
	}{
		{[]string{"h2"}, "HTTP/2.0", 2},
		{[]string{"h2", "http/1.1"}, "HTTP/2.0", 2},
		{[]string{"http/1.1"}, "HTTP/1.1", 1},
	} {
		t.Run(strings.Join(tc.offered, ","), func(t *testing.T) {
			sim, c := tlsSim(t, tc.offered...)
			ctx := ctxT(t)
			for i := range 10 {
				for _, n := range []Node{node1, node2} {
					if _, err := c.Version(ctx, n); err != nil {
						t.Fatalf("call %d, %s: %v", i, n.Host, err)
					}
					if _, err := c.lastEvents(ctx, n, simStart.Add(-time.Hour).UnixMilli()); err != nil {
						t.Fatalf("call %d, %s: %v", i, n.Host, err)
					}
				}
			}
			st := sim.Stats()
			calls := 1 + 10*2*2 // a login, then the calls
			if st.Protocols[tc.proto] != calls || len(st.Protocols) != 1 {
				t.Errorf("calls by protocol %v, want %d in %s", st.Protocols, calls, tc.proto)
			}
			if st.Logins != 1 {
				t.Errorf("%d logins, want 1", st.Logins)
			}
			if st.Connections != tc.conns {
				t.Errorf("%d connections, want %d", st.Connections, tc.conns)
			}
		})
	}
}

// directForTLS is the direct transport of a client for url, trusting ca.
func directForTLS(t *testing.T, url string, ca *testca.CA) *directTransport {
	t.Helper()
	cfg, err := Config{URL: url}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	cfg.TLS.CAFile = ca.File
	hc, err := newHTTPClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := hc.Transport.(*directTransport)
	t.Cleanup(d.CloseIdleConnections)
	return d
}

// A console that picked h2 and later answers in HTTP/1 (its front
// replaced): its next calls go through the direct transport again.
func TestConsoleLeavesHTTP2(t *testing.T) {
	ca, cert := consoleCert(t)
	var h2 atomic.Bool
	h2.Store(true)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.Proto)
	}))
	srv.EnableHTTP2 = true
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetHTTP2(true)
	srv.TLS = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		protos := []string{"http/1.1"}
		if h2.Load() {
			protos = []string{"h2"}
		}
		return &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: protos}, nil
	}, NextProtos: []string{"h2", "http/1.1"}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	d := directForTLS(t, srv.URL, ca)
	key := "https://" + srv.Listener.Addr().String()
	if got := call(t, d, http.MethodGet, srv.URL); got != "HTTP/2.0" || !d.speaksH2(key) {
		t.Fatalf("answered in %s, speaks h2 %v; want HTTP/2.0 and true", got, d.speaksH2(key))
	}
	h2.Store(false)
	d.fallback.CloseIdleConnections() // the next call handshakes again
	if got := call(t, d, http.MethodGet, srv.URL); got != "HTTP/1.1" || d.speaksH2(key) {
		t.Fatalf("after the front changed: answered in %s, speaks h2 %v; want HTTP/1.1 and false", got, d.speaksH2(key))
	}
	d.fallback.CloseIdleConnections()
	if got := call(t, d, http.MethodGet, srv.URL); got != "HTTP/1.1" {
		t.Fatalf("then: answered in %s", got)
	}
	if n := len(d.idle[key]); n != 1 {
		t.Errorf("the direct transport keeps %d connections to the console, want 1", n)
	}
}

// hostileAnswers are heads beyond the bounds of heads.go, as an HTTP
// handler writes them.
var hostileAnswers = []struct {
	name   string
	answer http.HandlerFunc
	limit  string // the bound named, "": any failure (net/http's own words)
}{
	{"a thousand interim answers", func(w http.ResponseWriter, r *http.Request) {
		for range 1000 {
			w.WriteHeader(http.StatusEarlyHints)
		}
		_, _ = io.WriteString(w, "{}")
	}, ""},
	{"150 short header fields", func(w http.ResponseWriter, r *http.Request) {
		for i := range 150 {
			w.Header().Set(fmt.Sprintf("X-F%d", i), "v")
		}
		_, _ = io.WriteString(w, "{}")
	}, "header fields, more than 100"},
	{"a head of a mebibyte", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Long", strings.Repeat("a", 1<<20))
		_, _ = io.WriteString(w, "{}")
	}, ""},
}

// Over HTTP/2 the answers are bounded as over HTTP/1: header fields by
// heads.go's bound, named alike; the head's size and the interim answers
// by net/http (the header list size announced to the console, which the
// interim answers' heads share), in its words.
func TestHostileHeadsOverHTTP2(t *testing.T) {
	ca, cert := consoleCert(t)
	for _, tc := range hostileAnswers {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewUnstartedServer(tc.answer)
			srv.EnableHTTP2 = true
			srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
			srv.Config.ErrorLog = log.New(io.Discard, "", 0)
			srv.StartTLS()
			t.Cleanup(srv.Close)
			d := directForTLS(t, srv.URL, ca)
			req, _ := http.NewRequestWithContext(ctxT(t), http.MethodGet, srv.URL, nil)
			start := time.Now()
			resp, err := d.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("answered %s %d", resp.Proto, resp.StatusCode)
			}
			if !d.speaksH2("https://" + srv.Listener.Addr().String()) {
				t.Errorf("not spoken to in HTTP/2")
			}
			var limit *headLimitError
			if tc.limit != "" && (!errors.As(err, &limit) || !strings.Contains(limit.Error(), tc.limit)) {
				t.Errorf("error %v, want %v", err, tc.limit)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("refused after %s", d)
			}
			t.Logf("%v", err)
		})
	}
}

// Through a proxy (net/http's transport), the same bounds.
func TestHostileHeadsThroughAProxy(t *testing.T) {
	for _, tc := range hostileAnswers {
		t.Run(tc.name, func(t *testing.T) {
			proxy, _ := newCountingServer(t, tc.answer)
			d := directFor(t)
			d.fallback.Proxy = func(*http.Request) (*url.URL, error) { return url.Parse(proxy.URL) }
			req, _ := http.NewRequestWithContext(ctxT(t), http.MethodGet, "http://console.invalid:8082/api/x", nil)
			resp, err := d.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("answered %d", resp.StatusCode)
			}
			var limit *headLimitError
			if tc.limit != "" && (!errors.As(err, &limit) || !strings.Contains(limit.Error(), tc.limit)) {
				t.Errorf("error %v, want %v", err, tc.limit)
			}
			t.Logf("%v", err)
		})
	}
}
