package apiclient

// The whole-listing calls and the explicit login: the exporter needs
// neither (it streams listings into the engine and logs in lazily), the
// tests use them to read what the console answers.

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/indexima-exporter/indexima_exporter/event"
)

// Listing is a whole event listing (spec 2.3), as collected by the
// test calls below. The exporter streams listings to an event.Handler.
type Listing struct {
	Reqs     []event.Event
	Runnings []event.Event
	Last     int64 // Unix milliseconds; meaningful only when HasLast
	HasLast  bool
}

// login logs in now (calls do it lazily when needed). Without a username it
// does nothing. While a login backoff is in force it returns the last login
// error without contacting the console.
func (c *Client) login(ctx context.Context) error {
	if c.cfg.Username == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	c.auth.mu.Lock()
	gen := c.auth.gen
	c.auth.mu.Unlock()
	if _, _, err := c.auth.renew(ctx, gen); err != nil {
		return err
	}
	return nil
}

// events lists the events of the current day (GET /api/monitor/get/events).
func (c *Client) events(ctx context.Context, node Node) (*Listing, error) {
	return c.collect(ctx, dayRequest(node, time.Time{}))
}

// eventsOn lists the events of one day (GET /api/monitor/get/events/yyyy-mm-dd).
func (c *Client) eventsOn(ctx context.Context, node Node, date time.Time) (*Listing, error) {
	return c.collect(ctx, dayRequest(node, date))
}

// lastEvents lists events since a Unix millisecond timestamp, usually the
// last value of a previous listing (GET /api/monitor/get/lastevents/:time).
func (c *Client) lastEvents(ctx context.Context, node Node, since int64) (*Listing, error) {
	return c.collectQuery(ctx, node, event.Since(since))
}

// eventRange lists at most limit events starting between start and end (Unix
// ms), ascending or descending (GET /api/monitor/get/event/{asc,desc}/...).
func (c *Client) eventRange(ctx context.Context, node Node, order event.Order, start, end int64, limit int) (*Listing, error) {
	return c.collectQuery(ctx, node, event.Range(order, start, end, limit))
}

func (c *Client) collectQuery(ctx context.Context, node Node, q event.Query) (*Listing, error) {
	rq, err := listingRequest(node, q)
	if err != nil {
		return nil, err
	}
	return c.collect(ctx, rq)
}

func (c *Client) collect(ctx context.Context, rq *request) (*Listing, error) {
	col := &collector{}
	info, err := c.stream(ctx, rq, col)
	if err != nil {
		return nil, err
	}
	col.l.Last, col.l.HasLast = info.Last, info.HasLast
	return &col.l, nil
}

// collector is the event.Handler behind the whole-listing calls.
type collector struct{ l Listing }

func (c *collector) Event(e event.Event) error   { c.l.Reqs = append(c.l.Reqs, e); return nil }
func (c *collector) Running(e event.Event) error { c.l.Runnings = append(c.l.Runnings, e); return nil }

// The endpoints of the day listings (get/events, get/events/:date), which
// only the tests call: the exporter reads ranges and lastevents.
const (
	endpointEvents   = "events"
	endpointEventsOn = "events_date"
)

// dayRequest builds the request of get/events (the current day, date
// zero) or get/events/:date (the date's own calendar day, in its own
// location).
func dayRequest(node Node, date time.Time) *request {
	rq := &request{monitor: true, node: node, method: http.MethodGet}
	if date.IsZero() {
		rq.endpoint, rq.path = endpointEvents, "/api/monitor/get/events"
		return rq
	}
	rq.endpoint = endpointEventsOn
	rq.path = fmt.Sprintf("/api/monitor/get/events/%04d-%02d-%02d", date.Year(), int(date.Month()), date.Day())
	return rq
}
