package apiclient

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	promconfig "github.com/prometheus/common/config"

	"github.com/indexima-exporter/indexima_exporter/event"
)

// Config configures a Client. The zero values of the optional fields get
// sensible defaults in New.
type Config struct {
	URL      string // console base URL, e.g. https://console.example:8082
	Username string // empty: authentication disabled, no login, no Authorization header
	Password promconfig.Secret
	Timeout  time.Duration        // per call, login included; default 10s
	TLS      promconfig.TLSConfig // CA file, client cert, server name, insecure skip verify

	MaxBodyBytes int64 // limit on every body, after decompression; default 64 MiB
	// LoginBackoff is the first wait after a refused or failed login before the
	// next attempt; it doubles up to MaxLoginBackoff. Calls made while waiting
	// fail fast with the last login error (no login storm).
	LoginBackoff    time.Duration // default 1s
	MaxLoginBackoff time.Duration // default 5m

	// KeptConns bounds the connections kept open to the console between
	// calls; default DefaultKeptConns. The exporter keeps one per node it
	// polls at once (--scrape.concurrency).
	KeptConns int

	Observer  Observer   // may be nil
	Logger    log.Logger // may be nil
	UserAgent string
	// LogCalls logs every call at debug level (the exporter sets it at
	// --log.level=debug): a line the level filter drops would still cost
	// each call its arguments' allocations.
	LogCalls bool
}

// Client talks to one console. It is safe for concurrent use.
type Client struct {
	cfg    Config
	http   *http.Client
	logger log.Logger
	debug  log.Logger // level.Debug(logger), made once: it logs every call
	auth   *session
	now    func() time.Time // the login backoff's clock; tests replace it
	noGzip bool             // tests: do not ask for gzip, to prove plain answers work
	clock  *consoleClock    // the console's clock, from its answers' Date header
	heads  *monitorHeaders  // the headers of each node's monitor calls (reqheaders.go)
}

// New checks cfg and returns a client; it does not contact the console.
func New(cfg Config) (*Client, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	hc, err := newHTTPClient(cfg)
	if err != nil {
		return nil, err
	}
	c := &Client{cfg: cfg, http: hc, logger: cfg.Logger, now: time.Now, clock: &consoleClock{}, heads: &monitorHeaders{}}
	if c.logger == nil {
		c.logger = log.NewNopLogger()
	}
	c.debug = level.Debug(c.logger)
	c.auth = &session{c: c, backoff: cfg.LoginBackoff}
	return c, nil
}

// Version calls GET /api/monitor/get/version on node.
func (c *Client) Version(ctx context.Context, node Node) (VersionInfo, error) {
	var info VersionInfo
	rq := &request{endpoint: EndpointVersion, monitor: true, node: node, method: http.MethodGet,
		path: "/api/monitor/get/version"}
	err := c.monitorCall(ctx, rq, func(b *body) error {
		data, err := b.readAll()
		if err != nil {
			return err
		}
		info, err = decodeVersion(data)
		return err
	})
	return info, err
}

// Columns calls GET /api/monitor/get/columns/:table on node.
func (c *Client) Columns(ctx context.Context, node Node, table string) (ColumnsInfo, error) {
	var info ColumnsInfo
	if table == "" {
		return info, &Error{Kind: KindRefused, Endpoint: EndpointColumns, Node: node.String(),
			Err: errors.New("the table name is empty")}
	}
	rq := &request{endpoint: EndpointColumns, monitor: true, node: node, method: http.MethodGet,
		path: "/api/monitor/get/columns/" + escapeSegment(table)}
	err := c.monitorCall(ctx, rq, func(b *body) error {
		data, err := b.readAll()
		if err != nil {
			return err
		}
		info, err = decodeColumns(data)
		return err
	})
	return info, err
}

// EventCount returns the number of events starting between start and end
// (GET /api/monitor/get/event/count/:start/:end).
func (c *Client) EventCount(ctx context.Context, node Node, start, end int64) (int64, error) {
	var n int64
	rq := &request{endpoint: EndpointEventCount, monitor: true, node: node, method: http.MethodGet,
		path: "/api/monitor/get/event/count/" + strconv.FormatInt(start, 10) + "/" + strconv.FormatInt(end, 10)}
	err := c.monitorCall(ctx, rq, func(b *body) error {
		data, err := b.readAll()
		if err != nil {
			return err
		}
		n, err = decodeCount(data)
		return err
	})
	return n, err
}

// StreamListing calls the listing endpoint selected by q and hands each event
// to h while decoding. See event.Handler for the staging rule. An error
// returned by h is returned unchanged; every other error is an *Error.
func (c *Client) StreamListing(ctx context.Context, node Node, q event.Query, h event.Handler) (ListingInfo, error) {
	rq, err := listingRequest(node, q)
	if err != nil {
		return ListingInfo{}, err
	}
	return c.stream(ctx, rq, h)
}

// stream makes the listing call rq and hands its events to h.
func (c *Client) stream(ctx context.Context, rq *request, h event.Handler) (ListingInfo, error) {
	var info ListingInfo
	err := c.monitorCall(ctx, rq, func(b *body) error {
		var err error
		info, err = decodeListing(b.Reader, h)
		return err
	})
	return info, err
}

// CloseIdleConnections releases the client's idle connections to the
// console, e.g. when a configuration reload replaces the client.
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }
