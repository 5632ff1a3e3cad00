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
// no redirects (a redirect would re-send the credentials elsewhere).
func newHTTPClient(cfg Config) (*http.Client, error) {
	tlsCfg, err := promconfig.NewTLSConfig(&cfg.TLS)
	if err != nil {
		return nil, fmt.Errorf("apiclient: TLS configuration: %w", err)
	}
	dialer := &net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		TLSClientConfig:       tlsCfg,
		TLSHandshakeTimeout:   cfg.Timeout,
		DisableCompression:    true, // we ask for gzip and decompress under the size limit
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   32, // every node is reached through the one console
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
		ForceAttemptHTTP2:     true,
	}
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}, nil
}
