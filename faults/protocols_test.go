package faults

import (
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// The exporter speaks to a console in the protocol it picks: over TLS,
// HTTP/2 behind an HTTP/2-only front (which refuses HTTP/1.1 in the
// handshake) and when the console offers both, HTTP/1.1 when it offers
// only that; plain HTTP, and through a proxy, as before. Every way, the
// events the console logged are counted exactly, and every call the
// console saw came in the protocol expected.
func TestConsoleProtocols(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t, dir, "console")
	cert, _, _ := ca.issue(t, dir, "console", "127.0.0.1", "console.test")
	for _, c := range []struct {
		name  string
		alpn  []string // what the console offers over TLS; nil: plain HTTP
		proxy bool
		proto string // of every call the console saw
	}{
		{"TLS, h2 only", []string{"h2"}, false, "HTTP/2.0"},
		{"TLS, h2 and http/1.1", []string{"h2", "http/1.1"}, false, "HTTP/2.0"},
		{"TLS, http/1.1 only", []string{"http/1.1"}, false, "HTTP/1.1"},
		{"plain HTTP", nil, false, "HTTP/1.1"},
		{"plain HTTP through a proxy", nil, true, "HTTP/1.1"},
		{"TLS, h2 only, through a proxy", []string{"h2"}, true, "HTTP/2.0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := rigOpts{sim: simulator.Config{Seed: 38, Rate: 1}, noStart: true}
			if c.alpn != nil {
				o.sim.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: c.alpn}
				o.consoleYAML = "tls_config:\n  ca_file: " + ca.File
			}
			r := newRig(t, o)
			var p *proxy
			if c.proxy {
				// A name the exporter cannot resolve: only the proxy
				// reaches the console (loopback addresses bypass proxies).
				scheme, addr, _ := strings.Cut(r.url, "://")
				p = startProxy(t, addr)
				_, port, _ := net.SplitHostPort(addr)
				r.url = scheme + "://console.test:" + port
				r.writeConfig(r.nodes)
				r.env = []string{"HTTP_PROXY=" + p.url, "HTTPS_PROXY=" + p.url, "NO_PROXY=", "no_proxy="}
			}
			r.start()
			s := r.scrape()
			for _, n := range r.nodes {
				if up, _ := s.value("indexima_up", node(n)); up != 1 {
					t.Fatalf("node %s down at the first scrape: %s", n, tail(r.exp.stderr.String(), 5))
				}
			}
			r.run(3, 30*time.Second)
			if tl := r.check(r.settle()); tl.expected == 0 {
				t.Errorf("no event to count: %s", tl)
			} else {
				t.Logf("%s; calls by protocol %v", tl, r.sim.Stats().Protocols)
			}
			st := r.sim.Stats()
			if len(st.Protocols) != 1 || st.Protocols[c.proto] == 0 {
				t.Errorf("the console saw calls by protocol %v, want all in %s", st.Protocols, c.proto)
			}
			if c.proxy && p.forwarded.Load()+p.tunnels.Load() == 0 {
				t.Errorf("nothing went through the proxy")
			}
		})
	}
}

// proxy is an HTTP proxy on loopback that takes every request, whatever
// host it names, to one console: plain HTTP forwarded, HTTPS tunnelled
// (CONNECT).
type proxy struct {
	url                string
	forwarded, tunnels atomic.Int64
}

func startProxy(t *testing.T, console string) *proxy {
	t.Helper()
	p := &proxy{}
	forward := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = "http", console
			pr.Out.Host = pr.In.Host
		},
		ErrorLog: log.New(io.Discard, "", 0),
	}
	var tunnels sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			p.forwarded.Add(1)
			forward.ServeHTTP(w, r)
			return
		}
		p.tunnels.Add(1)
		up, err := net.Dial("tcp", console)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		down, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			up.Close()
			return
		}
		_, _ = io.WriteString(down, "HTTP/1.1 200 Connection established\r\n\r\n")
		tunnels.Add(2)
		splice := func(dst, src net.Conn) {
			defer tunnels.Done()
			_, _ = io.Copy(dst, src)
			dst.Close()
			src.Close()
		}
		go splice(up, down)
		go splice(down, up)
	}))
	t.Cleanup(func() { srv.Close(); tunnels.Wait() })
	p.url = srv.URL
	return p
}
