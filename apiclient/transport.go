package apiclient

import (
	"fmt"
	"net"
	"net/http"
	"time"

	promconfig "github.com/prometheus/common/config"
)

// newHTTPClient builds the HTTP client: TLS from the Prometheus TLS config
// (verification on unless insecure_skip_verify), our own gzip handling, and
// no redirects (a redirect would re-send the credentials elsewhere). Calls
// go through directTransport (direct.go), and through net/http's transport
// (nethttp.go) when a proxy is configured or the console speaks HTTP/2.
func newHTTPClient(cfg Config) (*http.Client, error) {
	tlsCfg, err := promconfig.NewTLSConfig(&cfg.TLS)
	if err != nil {
		return nil, fmt.Errorf("apiclient: TLS configuration: %w", err)
	}
	dialer := &net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         dialer.DialContext,
		TLSClientConfig:     tlsCfg,
		TLSHandshakeTimeout: cfg.Timeout,
		DisableCompression:  true, // we ask for gzip and decompress under the size limit
		// Every node is reached through the one console (here through the
		// proxy), and the collector polls up to --scrape.concurrency nodes
		// at once: keeping as many idle connections lets each scrape reuse
		// them instead of opening (with https: handshaking) most again.
		MaxIdleConns:        cfg.KeptConns,
		MaxIdleConnsPerHost: cfg.KeptConns,
		// Requests are a few hundred bytes and bodies are read through our
		// own buffer: small connection buffers keep the connections cheap.
		WriteBufferSize: 1 << 10,
		ReadBufferSize:  1 << 10,
		IdleConnTimeout: 90 * time.Second,
		// What the direct transport bounds, bounded alike through a proxy
		// and over HTTP/2 (there, the header list size announced to the
		// console, interim answers included).
		MaxResponseHeaderBytes: maxHeadBytes,
		ExpectContinueTimeout:  time.Second,
		ForceAttemptHTTP2:      true,
		HTTP2:                  http2Bounds,
	}
	direct := &directTransport{fallback: tr, now: time.Now}
	return &http.Client{
		Transport: direct,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}, nil
}

// http2Bounds bound what net/http's HTTP/2 reads ahead of the callers. By
// default it lets a console send 4 MiB per call and 1 GiB per connection
// before the bodies are read, and a call's body waits for one of the
// body slots (body.go) while up to --scrape.concurrency calls are under
// way: a console, or anything in front of it, could make the exporter hold
// gigabytes. Over HTTP/1 the same bytes wait in the kernel's socket
// buffers. A console's answer is a few KiB; a backlog's listing of tens of
// MiB then comes at 256 KiB per round trip, ample on the networks between
// an exporter and its console.
var http2Bounds = &http.HTTP2Config{
	MaxReceiveBufferPerStream:     256 << 10,
	MaxReceiveBufferPerConnection: 2 << 20,
	// Frames of the protocol's default size: with net/http's 1 MiB, a
	// console could grow the read buffer of each connection to that.
	MaxReadFrameSize: 16 << 10,
}
