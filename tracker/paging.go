package tracker

import (
	"context"

	"github.com/go-kit/log/level"

	"github.com/indexima-exporter/indexima_exporter/event"
)

// page reads [start, end] through get/event/asc pages, counting what is new
// (dedup absorbs what was read before). The next page starts at the greatest
// date of the page (inclusive: dedup absorbs the overlap). A short page is
// not taken as the end, since consoles may cap :limit silently: paging stops
// at an empty page. A page of a single millisecond makes the limit grow, and
// past maxPageLimit paging moves beyond that millisecond. Each page costs
// one call of the poll's budget; when it runs out, done is false and next
// is where to go on. Events dated before lateBefore that are new were late
// (lateness.go).
func (p *pollRun) page(ctx context.Context, st *State, start, end, lateBefore int64) (found int, done bool, next int64, err error) {
	limit := pageLimit
	short := 0 // reqs of the previous page when it was short of its limit
	// shortMax and shortBy are the latest date the short page showed and
	// the time the node's clock had reached when it answered.
	var shortMax, shortBy int64
	for start <= end {
		if p.budget <= 0 {
			p.rep.Incomplete = true
			level.Debug(p.o.Logger).Log("msg", "search budget spent; the next poll goes on", "resume_at", start, "to", end)
			return found, false, start, nil
		}
		p.budget--
		s := p.newReader(st, modeCount)
		s.lateBefore = lateBefore
		b := &staged{s: s}
		if _, err := p.con.List(ctx, event.Range(event.Asc, start, end, limit), b); err != nil {
			return found, false, start, err
		}
		if short > 0 && completedBefore(b.reqs, shortMax, shortBy) {
			// The previous page was short of its limit, yet left out an
			// event after it that had completed when it answered: the
			// console caps :limit silently at that size. (Events that
			// completed between the two pages prove nothing: a busy
			// node's pages are short and followed by more.)
			st.PageCap = short
		}
		b.commit()
		found += s.fresh
		p.rep.EventsCounted += s.fresh
		p.noteFound(s)
		p.noteNeed(st, s)
		short = 0
		if s.reqs > 0 && s.reqs < limit {
			short, shortMax, shortBy = s.reqs, s.maxDate, s.shownBy
		}
		switch {
		case s.reqs == 0:
			return found, true, 0, nil
		case s.maxDate > start:
			start = s.maxDate
		case s.reqs >= limit && limit < maxPageLimit:
			// A full page of one millisecond: ask for more of it rather
			// than looping on the same page.
			limit = min(2*limit, maxPageLimit)
		default:
			// The page is one millisecond and no more of it can be had (all
			// of it, or all a silently capped console gives): move past it,
			// after checking, if it may have been cut, that the console
			// counts no more there.
			if s.reqs >= 2 && (st.PageCap == 0 || s.reqs >= st.PageCap) && st.unreadableAt(s.maxDate) == 0 {
				if err := p.checkWhole(ctx, st, s.maxDate); err != nil {
					return found, false, start, err
				}
			}
			start = s.maxDate + 1
		}
	}
	return found, true, 0, nil
}

// completedBefore tells whether one of evs, dated after after, shows it
// had completed by by (its start plus its duration).
func completedBefore(evs []event.Event, after, by int64) bool {
	for _, e := range evs {
		if e.Date > after && e.HasDuration && e.Date+max(e.Duration, 0) <= by {
			return true
		}
	}
	return false
}

// noteFound keeps the completions of the events a search page counted.
func (p *pollRun) noteFound(s *listingReader) {
	for _, f := range s.freshEnds {
		if f.timed && len(p.found) < maxFreshEnds {
			p.found = append(p.found, f)
		}
	}
}

// noteNeed records the lateness a search page found.
func (p *pollRun) noteNeed(st *State, s *listingReader) {
	if s.maxNeed > 0 {
		st.Lateness.noteNeed(st.refClock(), s.maxNeed)
	}
}

// settled tells whether the events of date m have surely completed, or the
// console lists its running events: only then can what it counts there
// beyond the known and running events be taken as events it will not list.
func (p *pollRun) settled(st *State, m int64) bool {
	listing := st.Semantics.RunningsAt != 0 && st.refClock()-st.Semantics.RunningsAt <= slotMS*lateSlots
	return listing || m <= st.Cursor-st.Lateness.settle(st.refClock(), p.o.maxRelistMS())
}

// checkWhole counts the millisecond m, whose page a console may have cut at
// a silent maximum of :limit: what it counts there beyond the known events
// (and the running ones, on a console that may count them) it will not
// list.
func (p *pollRun) checkWhole(ctx context.Context, st *State, m int64) error {
	if p.budget <= 0 {
		return nil
	}
	p.budget--
	n, err := p.con.Count(ctx, m, m)
	if err != nil {
		return err
	}
	short := n - st.Known.countRange(m, m)
	if st.Semantics.mode() != CountCompleted && p.main != nil {
		short -= p.main.runningIn(m, m)
	}
	if short > 0 && !p.settled(st, m) {
		// Running events the console counts but does not list, or events
		// it will not list: told once they must have completed. Until
		// then they are no evidence of the first.
		p.suspect += short
		return nil
	}
	if short > 0 {
		// The page was cut: the running events that left the runnings
		// there, or were given up, completed unseen (they are what it
		// holds and will not list), not aborted.
		p.noteUnreadable(st, m, short)
		for key, pe := range st.Pending {
			if pe.Date == m && p.main != nil && p.main.runningKeys[key] == nil {
				delete(st.Pending, key)
			}
		}
		for key, a := range st.Abandoned {
			if a.Date == m {
				delete(st.Abandoned, key)
			}
		}
	}
	return nil
}
