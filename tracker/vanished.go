package tracker

import (
	"context"
	"slices"
	"sort"

	"github.com/go-kit/log/level"

	"github.com/indexima-exporter/indexima_exporter/event"
)

// vanished deals with the running events the engine waits for that left
// the runnings without being seen completed. One dated at or after the
// listing's start was listed in full and would have been seen: it is
// waited for a few polls (a listing capped short of it, a search budget
// spent), then given up with a log line. One dated before (it ran longer
// than a listing may reach back) is looked up with
// get/event/asc/<date>/<date+lookupSpan>/<limit>, one call resolving the
// others of that span too, at most lookupsPerPoll calls a poll, oldest
// first. Those dated from leftFrom on are left to the next poll's page,
// which reads their interval (a listing cut at the console's cap, poll.go).
func (p *pollRun) vanished(ctx context.Context, st *State, s *listingReader, from, leftFrom int64) error {
	if s.inherit {
		return p.lookUpAbandoned(ctx, st, lookupsPerPoll)
	}
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
		if pe.Date >= s.shownBy {
			// The listing shows the node's clock no later than its start:
			// it may have gone back before it (the event shows again when
			// the clock catches up). Not a miss while nothing later shows.
			continue
		}
		if pe.Date >= leftFrom {
			continue // the next poll's page reads its interval: no miss yet
		}
		if pe.Date < from && calls < lookupsPerPoll {
			calls++
			full, err := p.lookUp(ctx, st, pe.Date)
			if err != nil {
				return err
			}
			if _, still := st.Pending[key]; !still || full {
				continue // found, or a full page that may have stopped short of it: not a miss
			}
		}
		cur := st.Pending[key]
		if cur.Misses+1 >= pendingMisses {
			delete(st.Pending, key)
			st.abandon(key, cur)
			level.Warn(p.o.Logger).Log("msg", "running event left the runnings without being seen completed; given up (aborted? the window's count shows it if it completed)",
				"event", pe.Type, "date", pe.Date, "polls", cur.Misses+1)
			continue
		}
		cur.Misses++
		st.Pending[key] = cur
	}
	return p.lookUpAbandoned(ctx, st, lookupsPerPoll-calls)
}

// lookUp reads the events starting in the look-up span from date (they
// apply all or nothing): a waited-for running event found completed is
// counted. full tells a page that may have stopped short of the span.
func (p *pollRun) lookUp(ctx context.Context, st *State, date int64) (full bool, err error) {
	end := max(date, min(date+lookupSpan, max(st.Cursor, st.Newest)))
	ls := p.newReader(st, modeCount)
	ls.lateBefore = 0 // a running event found completed was not late
	b := &staged{s: ls}
	if _, err := p.con.List(ctx, event.Range(event.Asc, date, end, lookupLimit), b); err != nil {
		return false, err
	}
	b.commit()
	p.rep.EventsCounted += ls.fresh
	return ls.reqs >= lookupLimit && ls.maxDate > date, nil
}

// lookUpAbandoned looks for the given-up running events again, each after
// 2, 4, 8, 16 and 32 polls, then every 32: on a console that counts running events, one that
// completed after all changes no count, and would otherwise stay hidden
// among the abandoned (a console with another count semantics shows it in
// its count, and the search finds it). One call covers every abandoned
// event of its span.
func (p *pollRun) lookUpAbandoned(ctx context.Context, st *State, budget int) error {
	if len(st.Abandoned) == 0 || !st.Semantics.includesRunning() {
		return nil
	}
	var due []PendingEvent
	for key, a := range st.Abandoned {
		a.Misses++
		st.Abandoned[key] = a
		if a.Misses >= 2 && (a.Misses&(a.Misses-1) == 0 || a.Misses%32 == 0) {
			due = append(due, a)
		}
	}
	sort.Slice(due, func(i, j int) bool { return due[i].Date < due[j].Date })
	covered := minInt64
	for _, a := range due {
		if budget <= 0 {
			break
		}
		if a.Date <= covered {
			continue
		}
		budget--
		if _, err := p.lookUp(ctx, st, a.Date); err != nil {
			return err
		}
		covered = a.Date + lookupSpan
	}
	return nil
}

// lookUpLeaving looks once more for the given-up running events the floor
// is about to leave behind (on a console that counts running events, where
// nothing else would show one that completed after all): each is looked
// for at the latest then, a late window after it started.
func (p *pollRun) lookUpLeaving(ctx context.Context, st *State) error {
	if len(st.Abandoned) == 0 || !st.Semantics.includesRunning() {
		return nil
	}
	floor := st.Cursor - p.o.windowMS()
	var leaving []int64
	for _, a := range st.Abandoned {
		if a.Date < floor {
			leaving = append(leaving, a.Date)
		}
	}
	slices.Sort(leaving)
	covered := minInt64
	for _, d := range leaving {
		if d <= covered {
			continue
		}
		if _, err := p.lookUp(ctx, st, d); err != nil {
			return err
		}
		covered = d + lookupSpan
	}
	return nil
}

// fullCheck is the self-check beyond the window, once per window of the
// cursor's time: the console's count of everything dated from first contact
// to the floor, against the books. More than the books hold means events
// became visible later than the window allows: they were not counted, and
// now they are reported (so reported minus counted shows them).
func (p *pollRun) fullCheck(ctx context.Context, st *State, s *listingReader) error {
	if r := &st.Retention; r.Seen {
		// A console that forgets cannot be asked what it no longer holds;
		// where its memory starts is looked at instead: soon after it was
		// learned, then once per late window.
		r.Polls++
		if r.recheckDue() || st.refClock()-st.Check.LastFull >= p.o.windowMS() {
			return p.recheckRetention(ctx, st)
		}
		return nil
	}
	if st.refClock()-st.Check.LastFull < p.o.windowMS() {
		return nil
	}
	if st.Floor <= st.Origin {
		return nil
	}
	n, err := p.con.Count(ctx, st.Origin, st.Floor-1)
	if err != nil {
		return err
	}
	if st.Semantics.subtractsRunning() {
		n -= s.runningIn(st.Origin, st.Floor-1) + st.Check.AbandonedSealed
	}
	st.Check.LastFull = st.refClock()
	if sealed := n - st.Check.BaselineSealed; sealed < st.Check.Sealed-st.Check.Missed {
		// Fewer than it counted before: the console forgets. Where its
		// memory starts is looked at, and the checks follow it from now on.
		level.Info(p.o.Logger).Log("msg", "the console counts fewer old events than it did: it forgets them; the self-check covers what it still remembers",
			"counted_before", st.Check.Sealed, "counted_now", sealed)
		st.Retention.Seen = true
		return p.recheckRetention(ctx, st)
	} else if sealed > st.Check.Sealed {
		missed := sealed - st.Check.Sealed
		st.Check.Missed += missed
		st.Check.Sealed = sealed
		level.Warn(p.o.Logger).Log("msg", "events became visible more than the late window behind the cursor: not counted, reported (raise --events.late-window if this repeats)",
			"events", missed, "window", p.o.Window)
	}
	return nil
}
