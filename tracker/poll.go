package tracker

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-kit/log/level"
)

// Report is what one poll did, for the exporter's logs and metrics.
type Report struct {
	Calls    int   // console calls of the poll
	Counted  int   // events counted
	Deficit  int64 // events the count said were missing before the search
	Searched bool  // a search for missing events ran
	// Incomplete is set when the search ran out of its call budget: what is
	// still missing is looked for by the next polls.
	Incomplete bool
}

// ErrNoLast is returned when a listing lacks `last`: without it the cursor
// cannot move.
type ErrNoLast struct{ What string }

func (e ErrNoLast) Error() string {
	return fmt.Sprintf("malformed answer: the %s listing has no \"last\" field", e.What)
}

// Poll reads what happened on a node since the previous poll and returns
// the node's new state; old is never modified. On an error, nothing of the
// poll applies: the caller keeps old, and the next poll reads the same
// events again.
func Poll(ctx context.Context, con Console, old *State, o Options) (*State, Report, error) {
	p := &poller{o: o.withDefaults(), budget: maxSearchCalls}
	p.con = &countingConsole{Console: con, calls: &p.rep.Calls}
	st := old.Clone()
	var err error
	if !st.Contacted {
		err = p.firstContact(ctx, st)
	} else {
		err = p.poll(ctx, st)
		var tl *tooLarge
		if errors.As(err, &tl) {
			// The refused listing was partly applied: start again from a
			// clean copy and read its interval in pages.
			level.Warn(p.o.Logger).Log("msg", "listing since the cursor too large; reading it in pages over the next polls", "from", tl.from, "err", tl.err)
			st = old.Clone()
			err = p.pollPaged(ctx, st, tl)
		}
	}
	if err != nil {
		var pe *PartialError
		if errors.As(err, &pe) {
			return st, p.rep, err
		}
		return nil, p.rep, err
	}
	return st, p.rep, nil
}

// PartialError is a poll whose count and listing were read but whose
// search, look-ups or full check failed: Poll then also returns the state
// with what was read whole (each page of a search applies all or nothing),
// which a caller may keep rather than drop (so that a node whose polls keep
// failing mid-way still catches up; the exporter keeps it only then); what
// is still missing is found by the next polls, whose count of the window
// shows it. The node is down for this poll either way (the error is the
// node's).
type PartialError struct{ Err error }

func (e *PartialError) Error() string {
	return "looking for missing events: " + e.Err.Error() + " (what was read whole is kept; the next poll goes on)"
}

func (e *PartialError) Unwrap() error { return e.Err }

type poller struct {
	con    *countingConsole
	o      Options
	rep    Report
	budget int // calls left for the search
	// sealedMid counts the known events sealed while a very large listing
	// was read (flushKnown): they were in the counted window.
	sealedMid int64
}

// countingConsole counts the calls of a poll.
type countingConsole struct {
	Console
	calls *int
}

func (c *countingConsole) List(ctx context.Context, q Query, h Handler) (Info, error) {
	*c.calls++
	return c.Console.List(ctx, q, h)
}

func (c *countingConsole) Count(ctx context.Context, start, end int64) (int64, error) {
	*c.calls++
	return c.Console.Count(ctx, start, end)
}

// poll is a poll after first contact. Two calls in the steady state:
//
//  1. event/count over the window [Floor, end], taken first, so that every
//     event it counts is visible to the listing that follows (a count taken
//     after a listing would also count events completed in between, and
//     report them missing);
//  2. lastevents from a little behind the cursor: far enough back to list
//     again the running events seen before (they are dated at their start)
//     and events that became visible late (learned, lateness.go), bounded.
//
// If the window holds events the exporter does not know (count above
// known), they are looked for (search.go) and counted in the same poll.
func (p *poller) poll(ctx context.Context, st *State) error {
	c0, floor := st.Cursor, st.Floor
	end := p.countEnd(st)
	count, err := p.con.Count(ctx, floor, end)
	if err != nil {
		return err
	}

	from := p.listingFrom(st)
	s := p.newSink(st, modeCount)
	info, err := p.con.List(ctx, Since(from), s)
	if errors.Is(err, ErrTooLarge) {
		return &tooLarge{err: err, count: count, floor: floor, end: end, from: from}
	}
	if err != nil {
		return err
	}
	s.end()
	if !info.HasLast {
		return ErrNoLast{"lastevents"}
	}
	return p.afterListing(ctx, st, s, info, c0, floor, end, from, count)
}

// tooLarge is a poll whose lastevents listing was refused for its size.
type tooLarge struct {
	err                     error
	count, floor, end, from int64
}

func (e *tooLarge) Error() string { return e.err.Error() }

// pollPaged is a poll whose listing is too large to read at once (a busy
// node after a long outage): asking for it again would fail forever. It
// takes `last` and the runnings from a one-event listing, marks the
// interval as unread, and the search reads it in pages, over as many polls
// as it takes; the floor waits for it.
func (p *poller) pollPaged(ctx context.Context, st *State, tl *tooLarge) error {
	s := p.newSink(st, modeRunnings)
	info, err := p.con.List(ctx, Range(Desc, tl.from, tl.end, 1), s)
	if err != nil {
		return err
	}
	if !info.HasLast {
		return ErrNoLast{"event/desc"}
	}
	st.addUnread(tl.from, tl.end)
	return p.afterListing(ctx, st, s, info, st.Cursor, tl.floor, tl.end, tl.from, tl.count)
}

// afterListing is the rest of a poll once its listing was read: running
// events, the check of the window's count, the search, the cursor, the
// learning and the books.
func (p *poller) afterListing(ctx context.Context, st *State, s *sink, info Info, c0, floor, end, from, count int64) error {
	s.commitRunnings()
	if s.runnings > 0 {
		st.Semantics.runningsListed(c0)
	}
	if s.maxDuration > 0 {
		st.Lateness.noteDuration(c0, s.maxDuration)
	}
	if s.overflow {
		level.Warn(p.o.Logger).Log("msg", "more running events than can be tracked; some may be found only by a search when they complete", "bound", pendingCap)
	}
	p.rep.Counted += s.fresh

	runningIn := s.runningIn(floor, end)
	dEx := count - st.Known.countRange(floor, end) - p.sealedMid
	dIn := dEx - runningIn
	if st.Rewound == 0 || c0 >= st.Rewound {
		// While the node's clock is behind where it was, the console no
		// longer shows some events the engine knows: its counts are low,
		// no evidence of what they count.
		st.Semantics.vote(runningIn, dEx, dIn)
	}
	deficit := st.Semantics.deficit(dEx, dIn)
	p.rep.Deficit = max(0, deficit)

	last := info.Last
	var failed error // a call after the listing failed: the poll is partial
	if st.Unread.Set || st.Futile.shouldSearch(deficit, dIn, st.Semantics.mode()) {
		p.rep.Searched = true
		// A very large listing may have moved the floor (flushKnown): below
		// it nothing can be told apart any more.
		found, err := p.search(ctx, st, s, max(floor, st.Floor), end, max(from, st.Floor), deficit)
		if err != nil {
			failed = err
		} else {
			st.Futile.searched(deficit, dIn, found, st.Semantics.mode())
			if found == 0 && !p.rep.Incomplete {
				st.Semantics.futile(dEx, dIn, c0)
			} else if found > 0 {
				st.Semantics.found(int64(found), runningIn, dIn)
			}
		}
	}

	if last < c0 {
		// The node restarted or its clock stepped back: follow it. Known
		// events (the floor does not go down) prevent any replay.
		level.Warn(p.o.Logger).Log("msg", "last went backwards; cursor follows", "cursor", c0, "last", last)
		st.Rewound = max(st.Rewound, c0)
	}
	st.Cursor = last
	if s.maxNeed > 0 {
		st.Lateness.noteNeed(last, s.maxNeed)
	}
	if s.newestSet {
		st.Lateness.noteLag(last, last-s.newest)
	}
	if failed == nil {
		failed = p.vanished(ctx, st, s, from)
	}
	st.report(count, runningIn)
	if failed == nil {
		failed = p.fullCheck(ctx, st, s)
	}
	// Missing events not found yet (a search cut short): the floor waits,
	// up to holdWindows late windows, so that they can still be counted.
	p.slide(st, deficit > 0 && (failed != nil || p.rep.Incomplete))
	if failed != nil {
		return &PartialError{Err: failed}
	}
	return nil
}

// countEnd is the end of the counted window: past `last` and past every
// date known, since a node whose clock runs ahead dates events after the
// console's `last`. On a console that counts running events but does not
// list them, it is where every event has surely completed instead
// (Semantics.Unlisted): misses of the latest events are then seen once they
// are that old.
func (p *poller) countEnd(st *State) int64 {
	if st.Semantics.Unlisted {
		return st.Cursor - st.Lateness.settle(st.Cursor, p.o.maxRelistMS())
	}
	end := st.Cursor
	if d, ok := st.Known.maxDate(); ok {
		end = max(end, d)
	}
	return end + lookaheadMS
}

// listingFrom is where the poll's lastevents listing starts: the learned
// slack behind the cursor, or further back to the oldest running event the
// engine waits for, but never more than half a window nor more than
// relistCap known events back, and never below the floor. A running event
// older than that is looked up when it completes (vanished).
func (p *poller) listingFrom(st *State) int64 {
	c := st.Cursor
	bound := max(st.Floor, c-p.o.maxRelistMS())
	if d, ok := st.Known.dateBeforeLast(relistCap, c); ok && d > bound {
		bound = d
	}
	from := c - st.Lateness.slack(c, p.o.maxRelistMS())
	if oldest, ok := st.oldestPending(); ok && oldest < from {
		from = oldest
	}
	return max(from, bound)
}

// slide moves the floor one window behind the cursor and seals what
// leaves the window. It waits for an interval still being read in pages,
// and, when hold is set (the count says events are missing and the search
// could not finish), does not move at all; either way it lags at most
// holdWindows late windows behind the cursor, beyond which what is still
// missing is given up (the self-check reports it).
func (p *poller) slide(st *State, hold bool) {
	floor := st.Cursor - p.o.windowMS()
	if st.Unread.Set && st.Unread.From < floor {
		floor = st.Unread.From
	}
	if hold {
		floor = min(floor, st.Floor)
	}
	if limit := st.Cursor - holdWindows*p.o.windowMS(); floor < limit {
		if limit > st.Floor {
			level.Warn(p.o.Logger).Log("msg", "events still missing after several late windows: given up (reported, not counted)",
				"from", st.Floor, "to", limit)
		}
		floor = limit
		if st.Unread.Set && st.Unread.To < floor {
			st.Unread = Interval{}
		} else if st.Unread.Set && st.Unread.From < floor {
			st.Unread.From = floor
		}
	}
	st.seal(floor)
}

// holdWindows bounds how far the floor may wait behind the cursor for
// missing events, in late windows (memory stays bounded by it).
const holdWindows = 4

// flushKnown merges a very large response's additions into the known set
// mid-response and, while the response is in ascending order, forgets what
// is more than a window behind its newest event, so that reading a day's
// backlog keeps a window of it in memory, not the day.
func (p *poller) flushKnown(st *State, r *response) {
	st.Known.flush(r)
	if st.Unread.Set || !r.ascending {
		return
	}
	if floor := r.newest - p.o.windowMS(); floor > st.Floor {
		before := st.Known.countRange(st.Floor, maxInt64)
		st.seal(floor)
		p.sealedMid += before - st.Known.countRange(st.Floor, maxInt64)
	}
}
