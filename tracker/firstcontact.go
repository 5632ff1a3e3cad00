package tracker

import (
	"context"
	"errors"

	"github.com/go-kit/log/level"

	"github.com/indexima-exporter/indexima_exporter/event"
	"github.com/indexima-exporter/indexima_exporter/tally"
)

// recentMS is how far before the console's clock the first listing of a
// first contact starts: a little, so that it holds the events of a node
// whose clock runs ahead of the console's, and little else.
const recentMS = 60_000

// firstContact takes the node's baseline: what happened before the exporter
// came is not counted, but it tells the node's present state. It asks the
// console only for times the console has shown: its clock, from the Date
// header of its answers (the exporter's own clock only for a console whose
// answers carry none), and the dates of its events.
//
//  1. lastevents from a minute before the console's clock: the running
//     events (and the latest events, read again by the pages).
//  2. event/desc pages from a day past the console's clock back (a node
//     whose clock runs ahead dates its events after it), newest first, until
//     the latest event that resets the cluster's state (CLUSTER_START,
//     CLUSTER_INIT or CLUSTER_STOP) is met and the late window is covered,
//     or until the look-back bound (Options.LookBack, LookBackCalls calls)
//     is hit. Events newer than that reset set the state gauges; events of
//     the window become known, so that they are never counted. After the
//     first page, the console's reading of range bounds is learned
//     (bounds.go), so that the next pages start exactly where they should.
//
// The cursor is the newest event date seen (no further ahead of the
// console's clock than a second); with no event at all, where the
// look-back began. `last` plays no part: what it is, the specification
// leaves open. A quiet node costs three calls; the bound caps a busy one.
//
// A console whose answers carry no Date header shows no clock: the
// look-back starts from the exporter's, which may be far from the node's.
// If it finds no event at all, one more call asks for the newest event the
// console holds, whatever its date, and first contact is taken again from
// there (anchor): otherwise a console months away from the exporter's clock
// would have its window stand after every event, and nothing would ever be
// counted, or reported.
func (p *pollRun) firstContact(ctx context.Context, st *State) error {
	fresh := *st
	now, ok, err := p.con.Clock(ctx)
	if err != nil {
		return err
	}
	if !ok {
		now = p.o.Now().UnixMilli()
		if p.anchor != 0 {
			now = p.anchor
		}
		level.Warn(p.o.Logger).Log("msg", "the console's answers carry no Date header: first contact reads back from the exporter's clock, or from the newest event", "now", now)
	}
	st.ClockAt = now
	lbFrom := now - p.o.LookBack.Milliseconds()
	setWindow := func() {
		c := lbFrom
		if p.newestSet {
			c = max(c, min(p.newest, now+p.allowance(st)))
		}
		st.Cursor = c
		st.Newest = max(st.Newest, c)
		st.Floor, st.Origin = c-p.o.windowMS(), c-p.o.windowMS()
	}
	setWindow()

	// The pages reach as far past the console's clock as counts do: a
	// listing capped short of the events of a node whose clock runs ahead
	// must not leave them to be counted at the next poll.
	end := now + lookaheadMS
	s := p.newReader(st, modeBaseline)
	if _, err := p.con.List(ctx, event.Since(now-recentMS), s); err != nil {
		if !errors.Is(err, ErrTooLarge) {
			return err
		}
		// A node far ahead of the console: its recent events are read by
		// the pages instead.
		s = p.newReader(st, modeBaseline)
	} else {
		s.end()
		s.commitRunnings()
	}
	setWindow()

	limit := lookBackLimit
	var reset listingReader // carries the state reset found across pages
	covered, read := false, s.reqs
	// suspect is a millisecond a page held alone, fewer events than asked:
	// whole, unless the next page shows that older events exist (a console
	// that lowers :limit silently), in which case it is counted.
	var suspect int64
	suspectSet := false
	for calls := 1; calls < p.o.LookBackCalls; calls++ {
		ps := p.newReader(st, modeBaseline)
		ps.resetAt, ps.resetSet = reset.resetAt, reset.resetSet
		if _, err := p.con.List(ctx, event.Range(event.Desc, lbFrom, end, limit), ps); err != nil {
			if ctx.Err() == nil {
				return err
			}
			// Cut by the scrape's deadline: what was read stands, as when
			// the call bound is hit, so that a node that cannot be read
			// back within one scrape still gets its baseline.
			level.Warn(p.o.Logger).Log("msg", "look-back cut by the scrape's deadline; the window starts where it stopped", "err", err)
			break
		}
		ps.end()
		if calls == 1 {
			setWindow()
			if err := p.learnBounds(ctx, st); err != nil {
				return err
			}
		}
		reset.resetAt, reset.resetSet = ps.resetAt, ps.resetSet
		read += ps.reqs
		if suspectSet && ps.reqs > 0 {
			if err := p.countUnreadBaseline(ctx, st, suspect); err != nil {
				return err
			}
		}
		suspectSet = false
		if ps.reqs == 0 {
			covered = true
			break
		}
		switch {
		case ps.minDate < end:
			end = ps.minDate
		case ps.reqs >= limit && limit < maxPageLimit:
			limit = min(2*limit, maxPageLimit)
		default:
			// The page held one millisecond alone: the next starts
			// before it.
			end = ps.minDate - 1
			if ps.reqs >= limit {
				// As many as a page holds: more may be there.
				if err := p.countUnreadBaseline(ctx, st, ps.minDate); err != nil {
					return err
				}
			} else {
				suspect, suspectSet = ps.minDate, true
			}
		}
		if end < lbFrom || ps.minDate < st.Floor && reset.resetSet {
			covered = ps.minDate < st.Floor || end < lbFrom
			break
		}
		if ps.minDate < st.Floor {
			covered = true // the window is read; go on only for the state
		}
	}
	if !ok && p.anchor == 0 && read == 0 && s.runnings == 0 {
		newest, found, err := p.newestEvent(ctx, now)
		if err != nil {
			return err
		}
		if found && (newest < lbFrom || newest > now+lookaheadMS) {
			level.Warn(p.o.Logger).Log("msg", "no event near the exporter's clock, and no Date header to tell the console's: first contact taken again from the newest event", "newest_event", newest, "exporter_clock", now)
			*st = fresh
			p.anchor, p.newest, p.newestSet = newest+1, 0, false
			return p.firstContact(ctx, st)
		}
	}
	if !covered && end+1 > st.Floor {
		// The bound was hit inside the window: the window starts where the
		// reading stopped (events at that millisecond may be partly read).
		st.Floor, st.Origin = end+1, end+1
	}
	st.Known.trimBelow(st.Floor)
	st.Contacted = true
	// What this version keeps, the look-back has learned (the latest
	// NODE_DOWN reports among it).
	st.Schema, st.RelearnNodeDown = Schema, false
	if st.Since == 0 {
		st.Since = p.o.Now().UnixMilli()
	}
	st.Own() // the maps are shared with the state this poll was cloned from (tally/cow.go)
	if st.Events == nil {
		st.Events = map[string]uint64{}
	}
	for _, t := range event.KnownTypes {
		st.Events[t] += 0
	}
	st.Check.LastFull = st.refClock()
	state := st.Phase.Value
	if !reset.resetSet {
		state = tally.StateUnknown + " (no cluster start, init or stop within the look-back)"
	}
	level.Info(p.o.Logger).Log("msg", "first contact: baseline taken, counting starts now", "cursor", st.Cursor,
		"console_clock", now, "events_read", read, "known_in_window", len(st.Known.entries), "running", s.runnings,
		"cluster_state", state, "calls", p.rep.Calls)
	return nil
}

// countUnreadBaseline counts the events of the millisecond m, which the
// look-back's pages moved past, and records those they did not read as
// baseline the console will not list (unreadable.go): not counted if read
// later, not reported. The running events listed at m are left out: they
// are counted when they complete.
func (p *pollRun) countUnreadBaseline(ctx context.Context, st *State, m int64) error {
	if m < st.Floor {
		return nil
	}
	n, err := p.con.Count(ctx, m, m)
	if err != nil {
		return err
	}
	for _, pe := range st.Pending {
		if pe.Date == m {
			n -= int64(pe.N)
		}
	}
	p.noteUnreadBaseline(st, m, n-st.Known.countRange(m, m))
	return nil
}

// farRangeMS is how far around the exporter's clock newestEvent looks: a
// console's clock off by years is beyond repair anyway.
const farRangeMS = 50 * 365 * 24 * 3600 * 1000

// newestEvent asks for the newest event the console holds, whatever its
// date (one call): its date is a time the console has shown.
func (p *pollRun) newestEvent(ctx context.Context, now int64) (int64, bool, error) {
	var h newestHandler
	if _, err := p.con.List(ctx, event.Range(event.Desc, max(now-farRangeMS, 0), now+farRangeMS, 1), &h); err != nil {
		return 0, false, err
	}
	return h.date, h.found, nil
}

// newestHandler keeps the latest date of a listing's events.
type newestHandler struct {
	date  int64
	found bool
}

func (h *newestHandler) Event(e event.Event) error {
	if !h.found || e.Date > h.date {
		h.date, h.found = e.Date, true
	}
	return nil
}

func (h *newestHandler) Running(e event.Event) error { return h.Event(e) }
