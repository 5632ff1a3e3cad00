package poller

import (
	"cmp"
	"slices"

	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// EventWriter receives the events each poll counted, before the poll's state
// (which holds them counted) is committed, so that a state the state store
// saves never holds an event the writer was not given first. The events come
// in date order. An error means the writer could not take them: the poll's
// state is then not committed (the node is down for that scrape) and the
// next poll reads the same events again.
type EventWriter interface {
	WriteEvents(n NodeRef, events []tracker.CountedEvent) error
}

// NodeRef names a node to an EventWriter.
type NodeRef struct {
	Cluster string // "" for the single unnamed cluster
	Name    string // the node label's value
	Target  string // host:port: with Cluster, what names the node's log across renames and restarts
}

// RecentEvents is how many of its latest counted events each node keeps in
// memory, for /status (which shows them all) and /events: kept for every
// node between scrapes, more would cost memory for what no page shows
// (docs/performance.md, memory).
const RecentEvents = 20

// eventRing keeps a node's last RecentEvents counted events.
type eventRing struct{ ring[tracker.CountedEvent] }

func (r *eventRing) add(evs []tracker.CountedEvent) { r.ring.add(RecentEvents, evs...) }

// newestFirst returns a copy of the events, the latest dated first (of two
// at one millisecond, the later counted first): an event that became
// visible late is counted after newer ones, and shown where its date puts
// it.
func (r *eventRing) newestFirst() []tracker.CountedEvent {
	out := r.ring.newestFirst()
	slices.SortStableFunc(out, func(a, b tracker.CountedEvent) int { return cmpDate(b, a) })
	return out
}

func cmpDate(a, b tracker.CountedEvent) int { return cmp.Compare(a.Date, b.Date) }

// inDateOrder sorts a poll's counted events by date (stable: identical
// events stay in the order of their places). Listings may come newest
// first and a search reads older events after newer ones.
func inDateOrder(evs []tracker.CountedEvent) {
	slices.SortStableFunc(evs, cmpDate)
}

// errEventWriter is the error of a poll whose events the writer refused.
type errEventWriter struct{ err error }

func (e *errEventWriter) Error() string {
	return "the counted events could not be handed to the event log, so the poll is not applied (read again by the next poll): " + e.err.Error()
}

func (e *errEventWriter) Unwrap() error { return e.err }
