package apiclient

import (
	"context"
	"errors"
	"time"

	"github.com/go-kit/log"
	promconfig "github.com/prometheus/common/config"
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

	Observer  Observer   // may be nil
	Logger    log.Logger // may be nil
	UserAgent string
}

// Client talks to one console. It is safe for concurrent use.
type Client struct {
	cfg Config
}

var errNotImplemented = errors.New("apiclient: not implemented yet")

// New checks cfg and returns a client; it does not contact the console.
func New(cfg Config) (*Client, error) { return &Client{cfg: cfg}, nil }

// Login logs in now (calls do it lazily when needed).
func (c *Client) Login(ctx context.Context) error { return errNotImplemented }

// Version calls GET /api/monitor/get/version on node.
func (c *Client) Version(ctx context.Context, node Node) (VersionInfo, error) {
	return VersionInfo{}, errNotImplemented
}

// Columns calls GET /api/monitor/get/columns/:table on node.
func (c *Client) Columns(ctx context.Context, node Node, table string) (ColumnsInfo, error) {
	return ColumnsInfo{}, errNotImplemented
}

// Events lists the events of the current day (GET /api/monitor/get/events).
func (c *Client) Events(ctx context.Context, node Node) (*Listing, error) {
	return c.collect(ctx, node, Today())
}

// EventsOn lists the events of one day (GET /api/monitor/get/events/yyyy-mm-dd).
func (c *Client) EventsOn(ctx context.Context, node Node, date time.Time) (*Listing, error) {
	return c.collect(ctx, node, OnDate(date))
}

// LastEvents lists events since a Unix millisecond timestamp, usually the
// last value of a previous listing (GET /api/monitor/get/lastevents/:time).
func (c *Client) LastEvents(ctx context.Context, node Node, since int64) (*Listing, error) {
	return c.collect(ctx, node, Since(since))
}

// EventRange lists at most limit events starting between start and end (Unix
// ms), ascending or descending (GET /api/monitor/get/event/{asc,desc}/...).
func (c *Client) EventRange(ctx context.Context, node Node, order Order, start, end int64, limit int) (*Listing, error) {
	return c.collect(ctx, node, Range(order, start, end, limit))
}

// EventCount returns the number of events starting between start and end
// (GET /api/monitor/get/event/count/:start/:end).
func (c *Client) EventCount(ctx context.Context, node Node, start, end int64) (int64, error) {
	return 0, errNotImplemented
}

// StreamListing calls the listing endpoint selected by q and hands each event
// to h while decoding. See ListingHandler for the staging rule.
func (c *Client) StreamListing(ctx context.Context, node Node, q Query, h ListingHandler) (ListingInfo, error) {
	return ListingInfo{}, errNotImplemented
}

func (c *Client) collect(ctx context.Context, node Node, q Query) (*Listing, error) {
	return nil, errNotImplemented
}
