package tracker

import (
	"context"
	"errors"
)

// Event is one event of a node's log as a listing shows it (spec 2.2).
type Event struct {
	Type        string
	Date        int64 // start of the event, Unix milliseconds (the node's clock)
	Duration    int64 // milliseconds; meaningful only when HasDuration
	HasDuration bool  // false when the field is missing or null
	Comment     string
}

// Order of a range listing.
type Order int

const (
	Asc  Order = iota // get/event/asc
	Desc              // get/event/desc
)

// Query is one of the listing endpoints the engine reads.
type Query struct {
	since      bool
	Since      int64 // get/lastevents/:time
	Order      Order
	Start, End int64 // get/event/{asc,desc}/:start/:end/:limit, inclusive
	Limit      int
}

// Since selects get/lastevents/:time.
func Since(t int64) Query { return Query{since: true, Since: t} }

// Range selects get/event/asc or get/event/desc.
func Range(o Order, start, end int64, limit int) Query {
	return Query{Order: o, Start: start, End: end, Limit: limit}
}

// IsSince tells a lastevents query from a range query.
func (q Query) IsSince() bool { return q.since }

// Handler receives a listing's events while its body is read. Events arrive
// before the body is known to be whole: the engine stages what it learns
// and keeps it only when the whole poll succeeds.
type Handler interface {
	Event(Event) error   // an element of reqs
	Running(Event) error // an element of runnings
}

// Info is what a listing says besides its events.
type Info struct {
	// Last is the listing's `last`, Unix milliseconds (HasLast). The
	// specification calls it "the timestamp of the current listing" and no
	// more: a node's clock, the console's, the newest event returned or the
	// :time asked are all readings of it, so the engine keeps it for the
	// logs and trusts it for nothing.
	Last    int64
	HasLast bool
	// Date is the console's clock when it answered (its Date header), Unix
	// milliseconds (HasDate): the one clock the console shows.
	Date    int64
	HasDate bool
}

// Console is what the engine needs of one node, through the cluster's
// console: its event listings and its event count. The API client
// satisfies it (through a small adapter naming the node); the tests use
// console models in-process.
type Console interface {
	List(ctx context.Context, q Query, h Handler) (Info, error)
	// Count is get/event/count/:start/:end: the events "starting between
	// :start and :end". Whether the bounds are included, and whether
	// running events are, is the console's choice; the engine finds out.
	Count(ctx context.Context, start, end int64) (int64, error)
	// Clock is the console's clock now, Unix milliseconds, from the Date
	// header of its latest answer (advanced by the time since); it may
	// make a cheap call when no answer is at hand. ok is false when the
	// console's answers carry no Date.
	Clock(ctx context.Context) (ms int64, ok bool, err error)
}

// ErrTooLarge marks a listing refused for its size (the client's body
// bound): the engine then reads that interval in pages instead of asking
// for it whole again. A Console wraps its size error with it.
var ErrTooLarge = errors.New("listing too large")
