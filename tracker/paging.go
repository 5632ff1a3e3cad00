package tracker

import (
	"context"

	"github.com/go-kit/log/level"
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
func (p *poller) page(ctx context.Context, st *State, start, end, lateBefore int64) (found int, done bool, next int64, err error) {
	limit := pageLimit
	short := 0 // reqs of the previous page when it was short of its limit
	for start <= end {
		if p.budget <= 0 {
			p.rep.Incomplete = true
			level.Debug(p.o.Logger).Log("msg", "search budget spent; the next poll goes on", "resume_at", start, "to", end)
			return found, false, start, nil
		}
		p.budget--
		s := p.newSink(st, modeCount)
		s.lateBefore = lateBefore
		b := &staged{s: s}
		if _, err := p.con.List(ctx, Range(Asc, start, end, limit), b); err != nil {
			return found, false, start, err
		}
		b.commit()
		found += s.fresh
		p.rep.Counted += s.fresh
		p.noteNeed(st, s)
		if short > 0 && s.reqs > 0 && s.maxDate > start {
			// The previous page was short of its limit but was not the end:
			// the console caps :limit silently at that size.
			st.PageCap = short
		}
		short = 0
		if s.reqs > 0 && s.reqs < limit {
			short = s.reqs
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
			// of it, or all a silently capped console gives): move past it.
			start = s.maxDate + 1
		}
	}
	return found, true, 0, nil
}

// noteNeed records the lateness a search page found.
func (p *poller) noteNeed(st *State, s *sink) {
	if s.maxNeed > 0 {
		st.Lateness.noteNeed(st.Cursor, s.maxNeed)
	}
}
