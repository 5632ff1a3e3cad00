package tracker

import "context"

// Bounds is what the engine learned of how the console reads the bounds of
// a range: get/event/asc, desc and count select the events "starting
// between :start and :end", which leaves open whether either bound is
// included. The engine works with inclusive intervals and asks for the
// :start and :end that select them once it knows; until then it takes both
// as included.
type Bounds struct {
	Known          bool `json:"known"`
	StartExclusive bool `json:"start_exclusive,omitempty"`
	EndExclusive   bool `json:"end_exclusive,omitempty"`
	// SinceInclusive is set once a lastevents/:time listing showed an event
	// dated :time: a listing can then start exactly after a millisecond
	// read whole. Until then (or on a console whose lastevents excludes
	// :time) the engine starts a little earlier and lets dedup absorb the
	// overlap, except where it must skip a millisecond (listingFrom).
	SinceInclusive bool `json:"since_inclusive,omitempty"`
}

// ask turns the inclusive interval [lo, hi] into the :start and :end that
// select it on this console.
func (b Bounds) ask(lo, hi int64) (start, end int64) {
	if b.StartExclusive && lo > minInt64 {
		lo--
	}
	if b.EndExclusive && hi < maxInt64 {
		hi++
	}
	return lo, hi
}

// learnBounds finds out which bounds the console's count includes, from a
// date d holding n known events (among the newest, whose events the console
// surely still holds; one with no known event a millisecond before or after
// when there is one): count(d, d) counts them only if both bounds are
// included; otherwise (d-1, d+0] and [d, d+1) tell which one is. One call on
// most consoles, three at most, once per node; nothing to learn from until
// the node has logged an event.
func (p *pollRun) learnBounds(ctx context.Context, st *State) error {
	if st.Bounds.Known {
		return nil
	}
	d, ok := st.Known.isolatedDate(64)
	if !ok {
		return nil
	}
	n := st.Known.countRange(d, d)
	r, err := p.con.rawCount(ctx, d, d)
	if err != nil {
		return err
	}
	since := st.Bounds.SinceInclusive
	if r > 0 {
		st.Bounds = Bounds{Known: true, SinceInclusive: since}
		return nil
	}
	before, err := p.con.rawCount(ctx, d-1, d)
	if err != nil {
		return err
	}
	after, err := p.con.rawCount(ctx, d, d+1)
	if err != nil {
		return err
	}
	// What each reading would answer: (start, end] counts d's events then
	// d+1's, [start, end) d-1's then d's, (start, end) nothing.
	k1, k2 := st.Known.countRange(d-1, d-1), st.Known.countRange(d+1, d+1)
	readings := []struct {
		b             Bounds
		before, after int64
	}{
		{Bounds{StartExclusive: true, EndExclusive: true}, 0, 0},
		{Bounds{StartExclusive: true}, n, k2},
		{Bounds{EndExclusive: true}, k1, n},
	}
	best, bestOff := readings[0].b, abs(before)+abs(after)
	for _, h := range readings[1:] {
		if off := abs(before-h.before) + abs(after-h.after); off < bestOff {
			best, bestOff = h.b, off
		}
	}
	best.Known, best.SinceInclusive = true, since
	st.Bounds = best
	return nil
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
