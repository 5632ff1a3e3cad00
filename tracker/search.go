package tracker

import (
	"context"

	"github.com/go-kit/log/level"
)

// search looks for the events that the window's count says exist but the
// engine does not know, reads them and counts the new ones, within the
// poll's call budget (what is left is found by the next poll: the count
// keeps showing it). It returns how many events it counted.
//
// Where missing events can be, in the order looked at:
//  1. an interval left unread by an earlier poll (a listing refused as too
//     large, a search cut by its budget or a failed call);
//  2. the listing's own range [from, end]: a console whose listing held
//     fewer events than there are (a capped listing);
//  3. before it, [floor, from): events that became visible after the cursor
//     had passed their date (listed only once completed, a lagging node
//     clock). The lateness found there makes later listings start further
//     back (lateness.go), so a console with this habit costs a search only
//     until it is learned.
//
// Each is asked for its count (one call) and, if short, bisected with counts
// against the known events down to ranges of a page, which are paged.
func (p *pollRun) search(ctx context.Context, st *State, s *listingReader, floor, end, from, deficit int64) (int, error) {
	found := 0
	if st.Unread.Set {
		u := st.Unread
		st.Unread = Interval{}
		d, err := p.shortfall(ctx, st, s, u.From, u.To)
		if err != nil {
			st.addUnread(u.From, u.To)
			return found, err
		}
		n, err := p.bisect(ctx, st, s, u.From, u.To, d, from)
		found += n
		if err != nil || st.Unread.Set {
			return found, err // the count of the next poll says what is still missing
		}
		deficit -= p.explained(st, s, d, u.From, u.To)
	}
	if deficit <= 0 {
		return found, nil
	}
	d, err := p.shortfall(ctx, st, s, from, end)
	if err != nil {
		return found, err
	}
	if d > 0 {
		n, err := p.bisect(ctx, st, s, from, end, d, from)
		found += n
		if err != nil {
			return found, err
		}
		if n > 0 && s.reqs > 0 && !s.inherit && (st.ListCap == 0 || s.reqs < st.ListCap) && p.cutProven(s, from) {
			// The listing left out events of its range that had
			// completed when it answered: its size is the console's cap
			// (listingFrom leaves room under it). (A page read instead of
			// a listing tells the page cap, which the search learns by
			// itself.)
			st.ListCap = s.reqs
		}
	}
	if rest := deficit - p.explained(st, s, d, from, end); rest > 0 && from > floor {
		n, err := p.bisect(ctx, st, s, floor, from-1, rest, from)
		found += n
		if err != nil {
			return found, err
		}
	}
	if found == 0 {
		level.Debug(p.o.Logger).Log("msg", "the count says events are missing but none was found", "deficit", deficit)
	}
	return found, nil
}

// explained is how much of the window's deficit a range's shortfall d
// accounts for. Until the console is known to count running events, the
// running events listed in the range may be part of d without being missing:
// they are taken out, so that the rest of the window is still looked at.
func (p *pollRun) explained(st *State, s *listingReader, d, lo, hi int64) int64 {
	if !st.Semantics.includesRunning() {
		d -= p.unsettledIn(st, s, lo, hi).total()
	}
	return max(d, 0)
}

// shortfall asks the console for the count of [lo, hi] and returns how
// many of those events the engine does not know (running ones aside when
// the console counts them).
func (p *pollRun) shortfall(ctx context.Context, st *State, s *listingReader, lo, hi int64) (int64, error) {
	if p.budget <= 0 {
		p.rep.Incomplete = true
		return 0, nil
	}
	p.budget--
	n, err := p.con.Count(ctx, lo, hi)
	if err != nil {
		return 0, err
	}
	d := n - st.Known.countRange(lo, hi) - st.unreadableIn(lo, hi)
	if st.Semantics.includesRunning() {
		// Running and given-up events are counted, not listed. Not the
		// running events that left the runnings lately: they completed (and
		// are here to be read) or were aborted (given up after a few polls).
		expect := p.unsettledIn(st, s, lo, hi).counted()
		if d < expect {
			// Fewer than the events listed running before this count was
			// taken: the console counts completed events only (now).
			st.Semantics.completedSeen()
			return d, nil
		}
		d -= expect
	}
	return d, nil
}

// bisect finds the d missing events of [lo, hi]: a range of at most a page
// of known events is paged; a larger one is split where it halves its known
// events, and the console's count of the lower half tells which halves hold
// missing events.
func (p *pollRun) bisect(ctx context.Context, st *State, s *listingReader, lo, hi, d, lateBefore int64) (int, error) {
	if d <= 0 || lo > hi {
		return 0, nil
	}
	if p.budget <= 0 {
		p.rep.Incomplete = true
		return 0, nil
	}
	leaf := pageLimit
	if st.PageCap > 0 {
		leaf = min(leaf, st.PageCap)
	}
	if st.Known.countRange(lo, hi) <= int64(leaf) || hi == lo {
		noted := st.unreadableIn(lo, lo)
		n, err := p.pageOrResume(ctx, st, lo, hi, lateBefore)
		if err == nil && hi == lo && n < int(d) && !p.rep.Incomplete && !st.Unread.Set && p.settled(st, lo) && st.unreadableIn(lo, lo) == noted {
			// One millisecond read whole by pages, still short of its
			// count: the console counts events there it will not list.
			short := d - int64(n)
			if !st.Semantics.includesRunning() {
				short -= p.unsettledIn(st, s, lo, lo).counted()
			}
			p.noteUnreadable(st, lo, st.unreadableIn(lo, lo)+short)
		}
		return n, err
	}
	mid := st.Known.medianDate(lo, hi)
	dl, err := p.shortfall(ctx, st, s, lo, mid)
	if err != nil {
		return 0, err
	}
	found := 0
	if dl > 0 {
		n, err := p.bisect(ctx, st, s, lo, mid, dl, lateBefore)
		if err != nil {
			return found, err
		}
		found += n
	}
	if dr := d - max(dl, 0); dr > 0 {
		n, err := p.bisect(ctx, st, s, mid+1, hi, dr, lateBefore)
		if err != nil {
			return found, err
		}
		found += n
	}
	return found, nil
}

// pageOrResume pages [lo, hi]; what the call budget or a failed call
// leaves unread is read first by the next poll.
func (p *pollRun) pageOrResume(ctx context.Context, st *State, lo, hi, lateBefore int64) (int, error) {
	n, done, next, err := p.page(ctx, st, lo, hi, lateBefore)
	if !done {
		st.addUnread(next, hi)
	}
	return n, err
}

// cutProven tells whether the search found an event, dated from on, that
// had completed when the listing s answered: the listing was cut. Events
// that completed after it (a busy node) prove nothing.
func (p *pollRun) cutProven(s *listingReader, from int64) bool {
	for _, f := range p.found {
		if f.date >= from && f.end <= s.shownBy {
			return true
		}
	}
	return false
}
