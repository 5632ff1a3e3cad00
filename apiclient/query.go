package apiclient

import "time"

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
