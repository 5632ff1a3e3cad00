package tracker

import (
	"context"
	"sort"

	"github.com/go-kit/log/level"
)

// vanished deals with the running events the engine waits for that left
// the runnings without being seen completed. One dated at or after the
// listing's start was listed in full and would have been seen: it is
// waited for a few polls (a listing capped short of it, a search budget
// spent), then given up with a log line. One dated before (it ran longer
// than a listing may reach back) is looked up with
// get/event/asc/<date>/<date+lookupSpan>/<limit>, one call resolving the
// others of that span too, at most lookupsPerPoll calls a poll, oldest
// first.
func (p *poller) vanished(ctx context.Context, st *State, s *sink, from int64) error {
	var keys []string
	for key := range st.Pending {
		if _, ok := s.runningKeys[key]; !ok {
			keys = append(keys, key)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := st.Pending[keys[i]], st.Pending[keys[j]]
		if a.Date != b.Date {
			return a.Date < b.Date
		}
		return keys[i] < keys[j]
	})
	calls := 0
	for _, key := range keys {
		pe, ok := st.Pending[key]
		if !ok {
			continue // resolved by an earlier look-up of this poll
		}
		if pe.Date > st.Cursor {
			// The node's clock went back before its start: it is in the
			// node's future, not vanished. It shows again when the clock
			// catches up.
			continue
		}
		if pe.Date < from && calls < lookupsPerPoll {
			calls++
			end := max(pe.Date, min(pe.Date+lookupSpan, st.Cursor))
			ls := p.newSink(st, modeCount)
			ls.lateBefore = 0 // a running event found completed was not late
			b := &staged{s: ls}
			if _, err := p.con.List(ctx, Range(Asc, pe.Date, end, lookupLimit), b); err != nil {
				return err
			}
			b.commit()
			p.rep.Counted += ls.fresh
			if _, still := st.Pending[key]; !still {
				continue
			}
			if ls.reqs >= lookupLimit && ls.maxDate > pe.Date {
				continue // a full page that may have stopped short of it: not a miss
			}
		}
		cur := st.Pending[key]
		if cur.Misses+1 >= pendingMisses {
			delete(st.Pending, key)
			level.Warn(p.o.Logger).Log("msg", "running event left the runnings without being seen completed; given up (the window's count shows it if it completed)",
				"event", pe.Type, "date", pe.Date, "polls", cur.Misses+1)
			continue
		}
		cur.Misses++
		st.Pending[key] = cur
	}
	return nil
}

// fullCheck is the self-check beyond the window, once per window of the
// cursor's time: the console's count of everything dated from first contact
// to the floor, against the books. More than the books hold means events
// became visible later than the window allows: they were not counted, and
// now they are reported (so reported minus counted shows them).
func (p *poller) fullCheck(ctx context.Context, st *State, s *sink) error {
	if st.Floor <= st.Origin || st.Cursor-st.Check.LastFull < p.o.windowMS() {
		return nil
	}
	n, err := p.con.Count(ctx, st.Origin, st.Floor-1)
	if err != nil {
		return err
	}
	if st.Semantics.subtractsRunning() {
		n -= s.runningIn(st.Origin, st.Floor-1)
	}
	st.Check.LastFull = st.Cursor
	if sealed := n - st.Check.BaselineSealed; sealed > st.Check.Sealed {
		missed := sealed - st.Check.Sealed
		st.Check.Missed += missed
		st.Check.Sealed = sealed
		level.Warn(p.o.Logger).Log("msg", "events became visible more than the late window behind the cursor: not counted, reported (raise --events.late-window if this repeats)",
			"events", missed, "window", p.o.Window)
	}
	return nil
}
