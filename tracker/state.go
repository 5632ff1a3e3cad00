package tracker

import "github.com/indexima-exporter/indexima_exporter/tally"

// State is everything the engine knows about one node: where it reads
// (cursor, window floor), what it has read (the known events of the window,
// the running events it waits for), what it learned about the console
// (lateness, clock lag, count semantics), the self-check's books, and the
// Tally. It is plain data: a poll works on a clone and the clone replaces
// the state only when the whole poll succeeded; the state file saves it.
type State struct {
	// Schema is what the state holds and what its fields mean (schema.go):
	// Schema when this version wrote it, 0 (schema 1) for an earlier
	// version's.
	Schema    int  `json:"schema,omitempty"`
	Contacted bool `json:"contacted"` // first contact done: baseline taken
	// Since is when counting began (first contact), by the exporter's clock,
	// Unix ms: the counters' created timestamp. 0: not known (a state file
	// of format 1).
	Since int64 `json:"since,omitempty"`
	// Cursor is where the node's log has been read up to, Unix ms by the
	// node's clock: the latest date of an event the console showed
	// (completed or running), never ahead of the console's clock by more
	// than the node's measured lead (guard.go). It only moves forward.
	// `last` plays no part in it: what `last` is, the specification leaves
	// open (docs/counting.md).
	Cursor int64 `json:"cursor"`
	// Newest is the latest event date ever shown, unclamped: a cursor not
	// backed by it and ahead of the console's clock is repaired.
	Newest int64 `json:"newest,omitempty"`
	// ClockAt is the console's clock (its Date header) at the latest poll,
	// Unix ms, or the exporter's when the console's answers carry none: the
	// clock what the engine learns ages by. 0: not yet.
	ClockAt int64 `json:"clock_at,omitempty"`
	// Floor is the window floor: events dated at or after it are told apart
	// exactly (they are in Known when read); events dated before it that
	// appear now are taken as read before, unless they are running events
	// the engine waits for. It follows the cursor one late window behind and
	// never goes down.
	Floor int64 `json:"floor"`
	// Origin is the floor at first contact: the self-check covers the
	// console's events dated from there on.
	Origin int64 `json:"origin"`

	Known   known                   `json:"known"`
	Pending map[string]PendingEvent `json:"pending"`
	// Unread is an interval still to be read in pages over the next polls
	// (a listing refused as too large, a search cut by its call budget);
	// zero: none. The floor waits for it.
	Unread Interval `json:"unread"`
	// PageCap is the silent cap of :limit the console was seen to apply (0:
	// none seen): the search splits ranges down to pages of that size.
	PageCap int `json:"page_cap,omitempty"`
	// ListCap is the cap of lastevents listings the console was seen to
	// apply (0: none seen): listings start where they have room. ListCut is
	// set when the latest listing was cut at it: the next one reads its
	// interval with a page instead.
	ListCap int  `json:"list_cap,omitempty"`
	ListCut bool `json:"list_cut,omitempty"`
	// CutFrom is where the cut listing started: the page reads from there
	// (the listing's running events may have carried the cursor far past
	// the events it showed), and the floor waits for it. 0: not known (a
	// state written before it was kept): the page starts as a listing.
	CutFrom int64 `json:"cut_from,omitempty"`
	// Deferred is how many missing events the cut listing left to the next
	// page; NoDefer is set when a page read fewer: listings no longer
	// defer until a search finishes.
	Deferred int64 `json:"deferred,omitempty"`
	NoDefer  bool  `json:"no_defer,omitempty"`
	// Bounds is how the console reads the bounds of a range (bounds.go).
	Bounds Bounds `json:"bounds"`
	// Retention is what the engine learned of a console that forgets old
	// events (retention.go).
	Retention Retention `json:"retention"`
	// Abandoned are running events that left the runnings and were never
	// seen completed (abandoned.go), by pending key.
	Abandoned map[string]PendingEvent `json:"abandoned,omitempty"`
	// Unreadable holds, by date, events the console counts at one
	// millisecond but never lists in full (unreadable.go).
	Unreadable map[int64]Unread `json:"unreadable,omitempty"`

	Lateness  Lateness  `json:"lateness"`
	Semantics Semantics `json:"semantics"`
	Check     SelfCheck `json:"check"`
	Futile    Futile    `json:"futile"`
	// RelearnNodeDown is set on a state that lacks the dates of the
	// latest NODE_DOWN reports (NodeDownLast): one of an earlier schema,
	// or whose dates Repair dropped. The next poll learns them again by a
	// look-back (relearn.go).
	RelearnNodeDown bool `json:"relearn_node_down,omitempty"`

	// Legacy is the dedup set of a state file of format 1, turned into
	// Known by Repair.
	Legacy *legacySeen `json:"seen,omitempty"`

	tally.Tally

	// counted holds the events counted into this state by the poll under
	// way (handout.go), outside the places of those dated before the
	// floor; never saved, empty in a committed state.
	counted []CountedEvent
	outside map[kEntry]int
}

// Interval is an interval of event dates, inclusive; zero when unset.
type Interval struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
	Set  bool  `json:"set"`
}

// addUnread extends the unread interval with [from, to].
func (st *State) addUnread(from, to int64) {
	if from > to {
		return
	}
	if st.Unread.Set {
		from, to = min(from, st.Unread.From), max(to, st.Unread.To)
	}
	st.Unread = Interval{From: from, To: to, Set: true}
}

// Clone copies the state for a poll: the tally's maps are shared with st
// until the copy writes to them (cow.go), the rest is copied.
func (st *State) Clone() *State {
	c := *st
	c.Known = st.Known.clone()
	c.Pending = cloneMap(st.Pending)
	c.Abandoned = cloneMap(st.Abandoned)
	c.Unreadable = cloneMap(st.Unreadable)
	c.Lateness = st.Lateness
	c.Legacy = nil
	if st.Legacy != nil {
		l := *st.Legacy
		c.Legacy = &l
	}
	c.Tally = st.Tally.Clone()
	c.counted, c.outside = nil, nil
	return &c
}

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	c := make(map[K]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// refClock is the clock learned state ages by (ClockAt), the cursor until
// a poll has set it.
func (st *State) refClock() int64 {
	if st.ClockAt != 0 {
		return st.ClockAt
	}
	return st.Cursor
}
