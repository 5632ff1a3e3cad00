package tracker

import (
	"context"

	"github.com/go-kit/log/level"
)

// The cursor and the console's clock.
//
// The cursor follows the dates of the events the console shows: they are
// the node's clock, the one thing about time every reading of the
// specification agrees on. `last` is not used: it may be the node's clock,
// the console's, the newest event returned (and :time when none is), or a
// value ahead of any clock (docs/counting.md). The console's clock, from
// the Date header of its answers, bounds the cursor instead: a node whose
// clock runs ahead of the console's dates its events ahead of it by its
// lead, and by no more; an event dated further ahead (a node clock that
// jumped) does not carry the cursor, and with it the window's floor, past
// the node's real events.

// guardSlackMS is how far past the console's clock (and the node's lead) a
// cursor may stand before it is taken for wrong: the Date header has whole
// seconds, and answers take time.
const guardSlackMS = 60_000

// allowance is how far ahead of the console's clock the node's events may
// be dated: its measured lead (the negative of the largest clock lag the
// evidence allows: the smallest lead, clocklag.go), at least a second (the
// Date header's resolution), at most a quarter of the window.
func (p *pollRun) allowance(st *State) int64 {
	lead := int64(0)
	if st.Lateness.LagKnown && st.Lateness.LagMS < 0 {
		lead = -st.Lateness.LagMS
	}
	return min(max(lead+1000, 1000), p.o.windowMS()/4)
}

// noteConsoleClock records the console's clock of a poll's listing, or
// the exporter's when the console shows none.
func (p *pollRun) noteConsoleClock(st *State, info ListingInfo) {
	now := p.o.Now().UnixMilli()
	if info.HasDate {
		now = info.Date
	}
	st.ClockAt = max(st.ClockAt, now)
}

// advance moves the cursor to the latest event date the poll showed,
// bounded by the console's clock plus the node's lead, and learns how late
// events come. It never moves back: a
// node whose clock stepped back dates its new events behind the cursor for
// a while, and the count of the window finds them (lateness.go learns how
// far back to list).
func (p *pollRun) advance(st *State, s *listingReader, info ListingInfo, c0 int64) {
	cand := c0
	if p.newestSet {
		cand = max(cand, p.newest)
		st.Newest = max(st.Newest, p.newest)
	}
	if info.HasDate {
		if limit := info.Date + p.allowance(st); cand > limit {
			level.Debug(p.o.Logger).Log("msg", "an event is dated ahead of the console's clock by more than the node's lead; the cursor stops at the clock",
				"event_date", p.newest, "console", info.Date)
			cand = max(c0, limit)
		}
	}
	st.Cursor = cand
	ref := st.refClock()
	if s.maxNeed > 0 {
		st.Lateness.noteNeed(ref, s.maxNeed)
	}
}

// guard repairs a cursor found ahead of the console's clock by more than
// the node's lead allows, and not backed by an event the node logged: a
// state written when the cursor could come from `last` (a console whose
// `last` is ahead of any clock), or edited. Left alone, the window's floor
// would stand ahead of every event the node logs, and nothing would ever be
// counted again. The repair takes first contact again: the counters keep
// their values, the books go on from them, and counting resumes from the
// console's present (events logged while the cursor was wrong are lost;
// they were). It is logged and counted (Tally.CursorRepairs).
func (p *pollRun) guard(ctx context.Context, st *State) (bool, error) {
	now, ok, err := p.con.Clock(ctx)
	if err != nil || !ok {
		return false, err
	}
	p.clock, p.clockSet = now, true
	if st.Cursor <= now+p.allowance(st)+guardSlackMS || st.Cursor <= st.Newest {
		return false, nil
	}
	level.Warn(p.o.Logger).Log("msg", "the cursor is ahead of the console's clock and of every event the node showed: repaired (first contact taken again, counters kept)",
		"cursor", st.Cursor, "console", now, "newest_event", st.Newest)
	counted := int64(0)
	for _, n := range st.Events {
		counted += int64(n)
	}
	if !st.RelearnNodeDown {
		p.downReadTo = st.Newest
	}
	fresh := &State{Tally: st.Tally, Since: st.Since}
	fresh.CursorRepairs++
	*st = *fresh
	if err := p.firstContact(ctx, st); err != nil {
		return false, err
	}
	// The books start from what was counted: reported goes on from there.
	st.Check.Sealed = counted
	p.rep.Repaired = true
	return true, nil
}
