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
// when a proxy is configured.
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
		// What the direct transport bounds, bounded alike through a proxy.
		MaxResponseHeaderBytes: maxHeadBytes,
		ExpectContinueTimeout:  time.Second,
		ForceAttemptHTTP2:      true,
	}
	direct := &directTransport{fallback: tr, now: time.Now}
	return &http.Client{
		Transport: direct,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}, nil
}
