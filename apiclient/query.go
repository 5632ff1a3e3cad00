package apiclient

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

type queryKind int

const (
	queryToday queryKind = iota
	queryDate
	querySince
	queryRange
)

// Query selects one of the listing endpoints for StreamListing.
type Query struct {
	kind       queryKind
	date       time.Time
	since      int64
	order      Order
	start, end int64
	limit      int
}

// Today selects get/events (the current day).
func Today() Query { return Query{kind: queryToday} }

// OnDate selects get/events/:date for the day of d (its year, month and day).
func OnDate(d time.Time) Query { return Query{kind: queryDate, date: d} }

// Since selects get/lastevents/:time with a Unix millisecond timestamp.
func Since(ms int64) Query { return Query{kind: querySince, since: ms} }

// Range selects get/event/{asc,desc}/:start/:end/:limit.
func Range(o Order, start, end int64, limit int) Query {
	return Query{kind: queryRange, order: o, start: start, end: end, limit: limit}
}

// request builds the HTTP request of the listing endpoint q selects.
func (q Query) request(node Node) (*request, error) {
	rq := &request{monitor: true, node: node, method: http.MethodGet}
	switch q.kind {
	case queryToday:
		rq.endpoint, rq.path = EndpointEvents, "/api/monitor/get/events"
	case queryDate:
		// The day is the date's own calendar day, in its own location.
		rq.endpoint = EndpointEventsOn
		rq.path = fmt.Sprintf("/api/monitor/get/events/%04d-%02d-%02d", q.date.Year(), int(q.date.Month()), q.date.Day())
	case querySince:
		rq.endpoint, rq.path = EndpointLastEvents, "/api/monitor/get/lastevents/"+strconv.FormatInt(q.since, 10)
	case queryRange:
		switch q.order {
		case Asc:
			rq.endpoint = EndpointEventAsc
		case Desc:
			rq.endpoint = EndpointEventDesc
		default:
			return nil, &Error{Kind: KindRefused, Endpoint: EndpointEventAsc, Node: node.String(),
				Err: fmt.Errorf("unknown order %q (want asc or desc)", truncate(string(q.order), 20))}
		}
		if q.limit < 0 {
			return nil, &Error{Kind: KindRefused, Endpoint: rq.endpoint, Node: node.String(),
				Err: fmt.Errorf("negative limit %d", q.limit)}
		}
		rq.path = fmt.Sprintf("/api/monitor/get/event/%s/%d/%d/%d", q.order, q.start, q.end, q.limit)
	default:
		return nil, &Error{Kind: KindRefused, Endpoint: EndpointEvents, Node: node.String(),
			Err: errors.New("zero Query: use Today, OnDate, Since or Range")}
	}
	return rq, nil
}

// escapeSegment escapes a path segment, "/" included; "." and ".." are
// escaped too, so that no server or proxy resolves them as path steps.
func escapeSegment(s string) string {
	switch s {
	case ".":
		return "%2E"
	case "..":
		return "%2E%2E"
	}
	return url.PathEscape(s)
}
