// Package event is the one vocabulary of a node's event log: an event as a
// listing shows it, the query of a listing endpoint, and the handler that
// receives a listing's events while it is read. The client (apiclient)
// decodes into it and the counting engine (tracker) counts it; neither
// converts it. It knows nothing of HTTP, JSON or counting.
package event

// Event is one event of a node's log as a listing shows it, an element of
// its reqs or runnings (spec 2.2).
type Event struct {
	Type        string
	Date        int64 // start of the event, Unix milliseconds (the node's clock)
	Duration    int64 // milliseconds; meaningful only when HasDuration
	HasDuration bool  // false when the field is missing or null
	Comment     string
}

// Order of a range listing: the endpoint's path segment.
type Order string

const (
	Asc  Order = "asc"  // get/event/asc
	Desc Order = "desc" // get/event/desc
)

// Query is one of the listing endpoints a poll reads.
type Query struct {
	since      bool
	Since      int64 // get/lastevents/:time, Unix milliseconds
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

// Handler receives a listing's events while its body is read, so memory
// does not grow with the size of the answer. Events arrive before the body
// is known to be whole: a handler stages what it learns and applies it
// only when the whole call (for the engine, the whole poll) succeeded. A
// handler's error stops the reading and is returned by the call.
type Handler interface {
	Event(Event) error   // an element of reqs
	Running(Event) error // an element of runnings
}
