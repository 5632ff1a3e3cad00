package tracker

import (
	"context"
	"errors"

	"github.com/go-kit/log/level"

	"github.com/indexima-exporter/indexima_exporter/event"
)

// Report is what one poll did, for the exporter's logs and metrics.
type Report struct {
	Calls         int   // console calls of the poll
	EventsCounted int   // events counted
	Deficit       int64 // events the count said were missing before the search
	Searched      bool  // a search for missing events ran
	// Incomplete is set when the search ran out of its call budget: what is
	// still missing is looked for by the next polls.
	Incomplete bool
	// Repaired is set when the node's cursor was found ahead of the
	// console's clock and first contact was taken again (guard.go).
	Repaired bool
	// Deferred is set when events the count says are missing were left to
	// the next poll's listing (a listing cut at the console's cap).
	Deferred bool
	// Events are the events the poll counted, each once, in the order
	// they were read: those of the state Poll returns (none when it
	// returns none), the latest Options.HandOut of them.
	Events []CountedEvent
}

// Poll reads what happened on a node since the previous poll and returns
// the node's new state; old is never modified. On an error, nothing of the
// poll applies: the caller keeps old, and the next poll reads the same
// events again.
func Poll(ctx context.Context, con Console, old *State, o Options) (*State, Report, error) {
	p := &pollRun{o: o.withDefaults(), budget: maxSearchCalls, downReadTo: minInt64}
	st := old.Clone()
	p.con = &countingConsole{Console: con, calls: &p.rep.Calls, b: &st.Bounds}
	var err error
	if !st.Contacted {
		err = p.firstContact(ctx, st)
	} else {
		// A state of an earlier schema not restored through Upgrade (a
		// caller that keeps states itself): upgraded here, once.
		st.Upgrade(p.o.DownNodeName)
		err = p.poll(ctx, st)
		var tl *tooLarge
		if errors.As(err, &tl) {
			// The refused listing was partly applied: start again from a
			// clean copy and read its interval in pages.
			level.Warn(p.o.Logger).Log("msg", "listing since the cursor too large; reading it in pages over the next polls", "from", tl.from, "err", tl.err)
			st = old.Clone()
			st.Upgrade(p.o.DownNodeName)
			p.con.b = &st.Bounds
			p.sealedMid = 0
			err = p.pollPaged(ctx, st, tl)
		}
	}
	if err != nil {
		var pe *PartialError
		if errors.As(err, &pe) {
			st.reportCounted()
			p.rep.Events = st.takeCounted(p.o.HandOut)
			return st, p.rep, err
		}
		return nil, p.rep, err
	}
	st.reportCounted()
	if st.RelearnNodeDown {
		// After the poll, so that a look-back that fails or runs out of
		// time never holds back the counting (relearn.go).
		p.relearnNodeDown(ctx, st)
	}
	p.rep.Events = st.takeCounted(p.o.HandOut)
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

// pollRun is one poll of a node under way: its console, budget and findings.
type pollRun struct {
	// anchor is where first contact reads back from on a console that
	// shows no clock and no event near the exporter's (firstcontact.go).
	anchor int64
	con    *countingConsole
	o      Options
	rep    Report
	budget int // calls left for the search
	// sealedMid counts the known events sealed while a very large listing
	// was read (flushKnown): they were in the counted window.
	sealedMid int64
	// main is the reader of the poll's listing (its running events).
	main *listingReader
	// suspect counts events the search found a console counts at a
	// millisecond whose page was cut, too recent to tell whether they are
	// running or will never be listed (checkWhole): no evidence of how it
	// counts.
	suspect int64
	// newest is the latest date of an event (completed or running) any
	// response of the poll showed: where the node's clock is at least.
	newest    int64
	newestSet bool
	// clock is the console's clock when the poll began (clockSet: its
	// answers show one).
	clock    int64
	clockSet bool
	// found holds the dates and completions of the events the search's
	// pages counted: those completed before the listing answered prove it
	// was cut (search.go).
	found []freshEnd
	// downReadTo is, when first contact is taken again (guard.go), the
	// latest date the node's listings had shown: its NODE_DOWN reports up
	// to there were read, and named, before, and its look-back does not
	// learn them again under the names in force now.
	downReadTo int64
}

// countingConsole counts the calls of a poll and asks for the inclusive
// intervals the engine works with in the console's reading of bounds.
type countingConsole struct {
	Console
	calls *int
	b     *Bounds
}

func (c *countingConsole) List(ctx context.Context, q event.Query, h event.Handler) (ListingInfo, error) {
	*c.calls++
	if !q.IsSince() {
		q.Start, q.End = c.b.ask(q.Start, q.End)
	}
	return c.Console.List(ctx, q, h)
}

func (c *countingConsole) Count(ctx context.Context, start, end int64) (int64, error) {
	*c.calls++
	start, end = c.b.ask(start, end)
	return c.Console.Count(ctx, start, end)
}

// rawCount asks for :start and :end as they are (learnBounds).
func (c *countingConsole) rawCount(ctx context.Context, start, end int64) (int64, error) {
	*c.calls++
	return c.Console.Count(ctx, start, end)
}

// poll is a poll after first contact. Two calls in the steady state:
//
//  1. event/count over the checked interval [lo, end]: the window (from the
//     floor, or from where the console still remembers, retention.go) to
//     well past every known date and the console's clock; taken first, so
//     that every event it counts is visible to the listing that follows (a
//     count taken after a listing would also count events completed in
//     between, and report them missing);
//  2. lastevents from a little behind the cursor: far enough back to list
//     again the running events seen before (they are dated at their start)
//     and events that became visible late (learned, lateness.go), bounded.
//
// If the interval holds events the exporter does not know (count above
// known), they are looked for (search.go) and counted in the same poll.
func (p *pollRun) poll(ctx context.Context, st *State) error {
	if repaired, err := p.guard(ctx, st); err != nil || repaired {
		return err
	}
	if err := p.learnBounds(ctx, st); err != nil {
		return err
	}
	if st.Retention.Seen {
		// A console that forgets may forget part of a millisecond it could
		// not list whole: what it still holds there is counted afresh by
		// the search, when the count shows it.
		st.Unreadable = nil
	}
	c0 := st.Cursor
	from, at := p.listingFrom(st)
	if st.ListCut {
		from = p.relistFrom(st)
	}
	lo, end := p.checkFrom(st, from), p.countEnd(st)
	listEnd := end
	if st.ListCut {
		// A page shows no running events: only those the previous listing
		// showed (dated up to its cursor) can be told from missing events,
		// whatever the console counts; the newer events are checked by the
		// next poll.
		end = min(end, c0)
	}
	count, err := p.con.Count(ctx, lo, end)
	if err != nil {
		return err
	}
	t1 := p.o.Now()
	s := p.newReader(st, modeCount)
	q := event.Since(at)
	if st.ListCut {
		// The previous listing was cut at the console's cap: this one
		// reads its interval whole, with a page of the caller's :limit
		// (which shows no running events: those of the previous listing
		// stand). Under a steady load beyond the cap, listings alternate.
		q, s.inherit = event.Range(event.Asc, from, listEnd, maxPageLimit), true
	} else {
		s.since, s.sinceSet = at, true
	}
	info, err := p.con.List(ctx, q, s)
	if errors.Is(err, ErrTooLarge) {
		return &tooLarge{err: err, count: count, lo: lo, end: end, from: from, fit: s.reqs}
	}
	if err != nil {
		return err
	}
	s.end()
	s.pageCut = s.inherit && (s.reqs >= maxPageLimit || st.PageCap > 0 && s.reqs >= st.PageCap)
	if s.pageCut {
		// The page was cut too: the search reads the rest in pages.
		st.addUnread(s.maxDate, listEnd)
	}
	return p.afterListing(ctx, st, s, info, c0, lo, end, from, count, p.o.Now().Sub(t1).Milliseconds())
}

// relistable tells whether a page can read whole what the listing s left:
// on a console that lists its running events (the page shows none; those
// of the previous listing stand) and whose pages are not capped at fewer
// events than the listing held.
//
// Only on a console that forgets nothing, gave up no running event and
// has no running event waited for vanished from what the listing shows (a
// cluster stop aborts them): a page's events are then told from the count
// alone. Otherwise the search runs at once.
func (p *pollRun) relistable(st *State, s *listingReader, from int64) bool {
	listing := st.Semantics.RunningsAt != 0 && st.refClock()-st.Semantics.RunningsAt <= slotMS*lateSlots
	simple := len(st.Abandoned) == 0 && !st.Retention.Seen && !st.Unread.Set
	for key, pe := range st.Pending {
		if _, ok := s.runningKeys[key]; !ok && pe.Date >= max(from, s.minDate) && pe.Date <= s.maxDate {
			// Left the runnings, and not among the completed events the
			// listing shows around it: aborted? Looked for now (vanished).
			return false
		}
	}
	return listing && simple && (st.PageCap == 0 || st.PageCap > max(s.reqs, st.ListCap))
}

// relistFrom is where a listing that reads whole what a cut listing left
// starts: as listingFrom, but for the room a capped listing needs, and no
// later than the cut listing itself started. A cut listing's running
// events carry the cursor to the console's present while the events it
// showed stop at the cap (or start after it, on a console whose cap keeps
// the newest): what lies between is read by this page, however long after
// the cut it comes (polls an hour apart).
func (p *pollRun) relistFrom(st *State) int64 {
	listCap := st.ListCap
	st.ListCap = 0
	from, _ := p.listingFrom(st)
	st.ListCap = listCap
	if st.CutFrom != 0 {
		from = min(from, max(st.CutFrom, st.Floor))
	}
	return from
}

// tooLarge is a poll whose lastevents listing was refused for its size.
type tooLarge struct {
	err                  error
	count, lo, end, from int64
	fit                  int // events read before the refusal
}

func (e *tooLarge) Error() string { return e.err.Error() }

// pollPaged is a poll whose listing is too large to read at once (a busy
// node after a long outage): asking for it again would fail forever. It
// takes the runnings from a one-event listing, marks the interval as
// unread, and the search reads it in pages, over as many polls as it
// takes; the floor waits for it.
func (p *pollRun) pollPaged(ctx context.Context, st *State, tl *tooLarge) error {
	s := p.newReader(st, modeRunnings)
	info, err := p.con.List(ctx, event.Range(event.Desc, tl.from, tl.end, 1), s)
	if err != nil {
		return err
	}
	st.addUnread(tl.from, tl.end)
	if tl.fit > 0 && (st.ListCap == 0 || tl.fit < st.ListCap) {
		// What fits in a listing: the next ones start where they have room
		// (listingFrom), so that a quiet node does not refuse the same
		// listing at every poll once its interval is read.
		st.ListCap = tl.fit
	}
	return p.afterListing(ctx, st, s, info, st.Cursor, tl.lo, tl.end, tl.from, tl.count, 0)
}

// afterListing is the rest of a poll once its listing was read: running
// events, the check of the count, the search, the cursor, the learning and
// the books. gap is how long the listing took after the count, in ms.
func (p *pollRun) afterListing(ctx context.Context, st *State, s *listingReader, info ListingInfo, c0, lo, end, from, count, gap int64) error {
	p.main = s
	mode0 := st.Semantics.mode()
	s.commitRunnings()
	ref0 := st.refClock()
	if s.runnings > 0 {
		st.Semantics.runningsListed(ref0)
	}
	// A lastevents listing that started after running events it waits for,
	// to leave room under a cap (ListCap): their completions are read by
	// the next poll's listing, at no call of its own, rather than looked up.
	oldest, waiting := st.oldestPending()
	skipped := !s.inherit && s.sinceSet && st.ListCap > 0 && waiting && oldest < from
	if s.maxDuration > 0 {
		st.Lateness.noteDuration(ref0, s.maxDuration)
	}
	if s.overflow {
		level.Warn(p.o.Logger).Log("msg", "more running events than can be tracked; some may be found only by a search when they complete", "bound", pendingCap)
	}
	p.rep.EventsCounted += s.fresh
	p.noteConsoleClock(st, info)

	// A count below the known events, beyond what events completing
	// between the two calls explain: the console forgot events, or no
	// longer shows them (its clock went back).
	trusted := true
	if x := count - st.Known.countRange(lo, end) - p.sealedMid; x < -s.raceCandidates(gap) || x < 0 && st.Retention.Below > 0 {
		// (An event that completed between the two calls is counted by the
		// next poll: a count below the known events two polls in a row is
		// no race.)
		var err error
		if lo, count, trusted, err = p.forgotten(ctx, st, s, lo, end, gap); err != nil {
			return err
		}
		st.Retention.Below = 0
	} else if x < 0 {
		st.Retention.Below++
	} else {
		st.Retention.Below, st.Retention.Wait = 0, 0
	}
	x := p.excess(st, lo, end, count)
	if trusted {
		expect := s.runningIn(lo, min(end, c0)) + st.abandonedIn(lo, end)
		// A page that did not read what the listing left to it (cut at a
		// cap it does not show): its count tells nothing.
		pageTellsNothing := s.inherit && !(int64(s.fresh) >= st.Deferred && !s.pageCut)
		switch {
		case pageTellsNothing:
		case s.inherit && end <= c0:
			// A count up to the previous listing's cursor, then a page
			// that lists what completed: the running events it leaves
			// are exactly those a console that counts them counts (no
			// race: they started before the count, and those completed
			// since are known now).
			st.Semantics.inherited(x, expect)
		default:
			st.Semantics.vote(x, expect, s.shortGap(gap))
		}
	}
	// On a console that counts running events, the running and given-up
	// ones are not missing. The running events that left the runnings
	// lately are looked for all the same: most completed, and are to be
	// read (a capped listing may have stopped short of them); the self-check
	// leaves them out until then, since an aborted one never completes.
	counted := p.unsettledIn(st, s, lo, end).counted()
	deficit := x
	if st.Semantics.includesRunning() {
		deficit -= counted
	}
	p.rep.Deficit = max(0, deficit)
	// Events missing after a lastevents listing (one cut at the console's
	// cap, above all) are first left to the next poll's listing: a page of
	// the caller's :limit over the same interval, which reads them at no
	// call of its own; only what that page does not explain is searched.
	// Under a steady load beyond the cap, listings alternate and each poll
	// costs its two calls.
	// A page that did not read what was left to it (cut, or fewer new
	// events than were missing: a console's silent cap) ends the
	// alternation until a search has run.
	if s.inherit && (s.pageCut || int64(s.fresh) < st.Deferred) {
		st.NoDefer = true
	}
	cut := (skipped || trusted && deficit > 0 && !s.inherit && s.sinceSet && !st.Unread.Set) && !st.NoDefer && p.relistable(st, s, from)
	// (A page whose count stopped at the previous cursor leaves the newer
	// events to the next poll too.)
	st.ListCut, p.rep.Deferred = cut, cut || s.inherit && end <= c0
	st.CutFrom = 0
	if cut {
		st.CutFrom = from
	}
	st.Deferred = 0
	if cut {
		// What the page must read: on a console not known to leave
		// running events out of its count, those listed may be all
		// the deficit.
		st.Deferred = max(deficit, 0)
		if st.Semantics.mode() == CountUnknown {
			st.Deferred = max(deficit-counted, 0)
		}
	}

	var failed error // a call after the listing failed: the poll is partial
	if trusted && !cut && (st.Unread.Set || st.Futile.shouldSearch(deficit, x-counted, st.Semantics.mode())) {
		p.rep.Searched = true
		// A very large listing may have moved the floor (flushKnown): below
		// it nothing can be told apart any more.
		found, err := p.search(ctx, st, s, max(lo, st.Floor), end, max(from, lo, st.Floor), deficit)
		if err != nil {
			failed = err
		} else {
			if found > 0 {
				st.Semantics.found(int64(found), s.runningIn(lo, end), x-counted)
			}
			// What the count still holds beyond the known events (less what
			// the search found the console cannot list).
			rem := p.excess(st, lo, end, count)
			if !p.rep.Incomplete && !st.Unread.Set {
				// Every page the counts pointed at was read: what is left
				// cannot be listed.
				st.Semantics.searched(rem-p.suspect, p.unsettledIn(st, s, lo, end).counted(), st.refClock())
			}
			left := rem
			if st.Semantics.includesRunning() {
				left -= counted
			}
			st.Futile.searched(left, rem-counted, found, st.Semantics.mode())
			if !p.rep.Incomplete && !st.Unread.Set && !s.inherit {
				st.NoDefer = false // (a page's search stops at the previous cursor)
			}
		}
	}

	p.advance(st, s, info, c0)
	// A listing that showed every event visible at its time, from its
	// start on, as far as the engine can tell (not cut, no event missing by
	// a count it trusts, at no cap): what it did not show, the next poll's
	// listing tells when it became visible (clocklag.go).
	whole := !(trusted && deficit > 0) && !cut && !s.overflow && (st.ListCap == 0 || s.reqs < st.ListCap)
	p.learnLag(st, s, info, from, gap, whole)
	if failed == nil {
		leftFrom := int64(maxInt64)
		if cut {
			leftFrom = p.relistFrom(st)
		}
		failed = p.vanished(ctx, st, s, from, leftFrom)
	}
	if trusted {
		// The events the console counts but never lists are missed:
		// reported holds them.
		excess, u := p.excess(st, lo, end, count)+st.missedUnreadableIn(lo, end), p.unsettledIn(st, s, lo, end)
		// A page shows no running events: on a console that may count
		// them, those the previous listing showed may not be all the count
		// holds (a node clock that went back starts events behind the
		// cursor); what is unexplained waits for a listing of runnings.
		inheritUnsure := s.inherit && st.Semantics.mode() != CountCompleted
		// A verdict on the count's semantics changed by this very poll
		// (a console switched) is confirmed by the next before what it
		// leaves unexplained is reported.
		switched := st.Semantics.mode() != mode0
		if cut || inheritUnsure || switched || p.rep.Searched && (failed != nil || p.rep.Incomplete || st.Unread.Set) {
			// The search did not finish, or was left to the next poll, or
			// the listing showed no running events on a console that may
			// count them: what is unexplained may be events of a kind the
			// console was not known to count (a console switched to
			// counting running events); reported, which cannot be taken
			// back, waits for a poll that tells.
			excess, u = 0, unsettled{}
		}
		st.report(excess, u)
	}
	if failed == nil {
		failed = p.fullCheck(ctx, st, s)
	}
	st.Retention.notePoll(st.refClock()-ref0, int64(s.fresh))
	if failed == nil {
		failed = p.lookUpLeaving(ctx, st)
	}
	// Missing events not found yet (a search cut short): the floor waits,
	// up to holdWindows late windows, so that they can still be counted.
	p.slide(st, deficit > 0 && (failed != nil || p.rep.Incomplete))
	if failed != nil {
		return &PartialError{Err: failed}
	}
	return nil
}

// excess is the console's count of [lo, end] less the events the engine
// knows there and those it knows the console cannot list (unreadable.go):
// the events it counts that the engine has not read, running ones included.
func (p *pollRun) excess(st *State, lo, end, count int64) int64 {
	return count - st.Known.countRange(lo, end) - p.sealedMid - st.unreadableIn(lo, end)
}

// unsettled counts the events of an interval that started but are not
// known completed: listed running, left the runnings lately (vanished), or
// given up (abandoned.go). A console that counts running events counts
// them.
type unsettled struct{ running, vanished, abandoned int64 }

func (u unsettled) total() int64 { return u.running + u.vanished + u.abandoned }

// counted are those a console that counts running events surely counts:
// the vanished ones may have completed (and are then to be read).
func (u unsettled) counted() int64 { return u.running + u.abandoned }

func (p *pollRun) unsettledIn(st *State, s *listingReader, lo, hi int64) unsettled {
	return unsettled{running: s.runningIn(lo, hi), vanished: st.vanishedIn(lo, hi, s), abandoned: st.abandonedIn(lo, hi)}
}

// countEnd is the end of the counted interval: well past the cursor, every
// date known and the console's clock, since a node whose clock runs ahead
// dates events after them. On a console that counts running events but
// does not list them, it is where every event has surely completed instead
// (Semantics.Unlisted): misses of the latest events are then seen once they
// are that old.
func (p *pollRun) countEnd(st *State) int64 {
	if st.Semantics.Unlisted {
		// By the node's clock: the console's less the node's lag (the
		// exporter's clock when the console shows none), not the cursor,
		// which a listing capped short of the new events cannot move. The
		// console's clock at the previous poll, or now if it went back
		// since (an NTP correction), and the largest lag the evidence
		// allows: where the node's clock is at least.
		now := st.refClock()
		if p.clockSet {
			now = min(now, p.clock)
		}
		if st.Lateness.LagKnown {
			now -= st.Lateness.LagMS
		}
		return max(st.Cursor, now) - st.Lateness.settle(st.refClock(), p.o.maxRelistMS())
	}
	end := max(st.Cursor, st.ClockAt)
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
//
// On a console whose listings are capped (ListCap, learned by the search),
// the listing must also leave room for new events: it starts after the
// newest known events that would fill half of it, past a whole millisecond
// if one holds that many (a batch logged at one millisecond, read whole by
// pages). Otherwise a cap that keeps the oldest would return the same
// events at every poll, and every poll would need a search.
//
// at is the :time to ask for: from itself once the console was seen to
// include :time, or where it skips a millisecond; otherwise a millisecond
// earlier, so that a console that excludes :time lists from too.
func (p *pollRun) listingFrom(st *State) (from, at int64) {
	c := st.Cursor
	bound := max(st.Floor, c-p.o.maxRelistMS())
	if d, ok := st.Known.dateBeforeLast(relistCap, c); ok && d > bound {
		bound = d
	}
	from = c - st.Lateness.slack(st.refClock(), p.o.maxRelistMS())
	if oldest, ok := st.oldestPending(); ok && oldest < from {
		from = oldest
	}
	from = max(from, bound)
	if st.ListCap > 0 {
		room := max(st.ListCap/2, 1)
		if d, ok := st.Known.dateBeforeLast(room, maxInt64-1); ok && d >= from {
			return d + 1, d + 1
		}
	}
	if st.Bounds.SinceInclusive {
		return from, from
	}
	return from, from - 1
}

// slide moves the floor one window behind the cursor and seals what
// leaves the window. It waits for an interval still being read in pages,
// and, when hold is set (the count says events are missing and the search
// could not finish), does not move at all; either way it lags at most
// holdWindows late windows behind the cursor, beyond which what is still
// missing is given up (the self-check reports it).
func (p *pollRun) slide(st *State, hold bool) {
	floor := st.Cursor - p.o.windowMS()
	if st.Unread.Set && st.Unread.From < floor {
		floor = st.Unread.From
	}
	if st.ListCut && st.CutFrom != 0 && st.CutFrom < floor {
		// What the cut listing left is read by the next poll's page.
		floor = max(st.CutFrom, st.Floor)
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
func (p *pollRun) flushKnown(st *State, r *response) {
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

// noteNewest records a date an answer showed (listingReader).
func (p *pollRun) noteNewest(date int64) {
	if !p.newestSet || date > p.newest {
		p.newest, p.newestSet = date, true
	}
}
