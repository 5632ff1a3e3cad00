package tracker

import (
	"context"

	"github.com/go-kit/log/level"
)

// firstContact takes the node's baseline: what happened before the exporter
// came is not counted, but it tells the node's present state.
//
//  1. lastevents from tomorrow (by the exporter's clock) lists no event but
//     gives the console's `last` and the running events. Everything after
//     comes from `last`: the engine never asks for a day, so an exporter
//     whose clock is off around midnight asks for nothing wrong.
//  2. event/desc pages from `last` back, newest first, until the latest
//     event that resets the cluster's state (CLUSTER_START, CLUSTER_INIT or
//     CLUSTER_STOP) is met and the late window is covered, or until the
//     look-back bound (Options.LookBack before `last`, LookBackCalls calls)
//     is hit. Events newer than that reset set the state gauges; events of
//     the window become known, so that they are never counted.
//
// A quiet node costs two calls; the bound caps a busy one.
func (p *poller) firstContact(ctx context.Context, st *State) error {
	s := p.newSink(st, modeRunnings)
	info, err := p.con.List(ctx, Since(p.o.Now().UnixMilli()+farFutureMS), s)
	if err != nil {
		return err
	}
	if !info.HasLast {
		return ErrNoLast{"lastevents"}
	}
	last := info.Last
	st.Cursor, st.Floor, st.Origin = last, last-p.o.windowMS(), last-p.o.windowMS()
	s.commitRunnings()

	from, end, limit := last-p.o.LookBack.Milliseconds(), last+lookaheadMS, lookBackLimit
	var reset sink // carries the state reset found across pages
	covered, read := false, 0
	for calls := 1; calls < p.o.LookBackCalls; calls++ {
		ps := p.newSink(st, modeBaseline)
		ps.resetAt, ps.resetSet = reset.resetAt, reset.resetSet
		if _, err := p.con.List(ctx, Range(Desc, from, end, limit), ps); err != nil {
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
		reset.resetAt, reset.resetSet = ps.resetAt, ps.resetSet
		read += ps.reqs
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
			end = ps.minDate - 1
		}
		if end < from || ps.minDate < st.Floor && reset.resetSet {
			covered = ps.minDate < st.Floor || end < from
			break
		}
		if ps.minDate < st.Floor {
			covered = true // the window is read; go on only for the state
		}
	}
	if !covered && end+1 > st.Floor {
		// The bound was hit inside the window: the window starts where the
		// reading stopped (events at that millisecond may be partly read).
		st.Known.trimBelow(end + 1)
		st.Floor, st.Origin = end+1, end+1
	}
	st.Contacted = true
	st.Since = p.o.Now().UnixMilli()
	if st.Events == nil {
		st.Events = map[string]uint64{}
	}
	for _, t := range KnownTypes {
		st.Events[t] += 0
	}
	st.Check.LastFull = last
	state := st.Phase.Value
	if !reset.resetSet {
		state = StateUnknown + " (no cluster start, init or stop within the look-back)"
	}
	level.Info(p.o.Logger).Log("msg", "first contact: baseline taken, counting starts now", "cursor", last,
		"events_read", read, "known_in_window", len(st.Known.entries), "running", s.runnings,
		"cluster_state", state, "calls", p.rep.Calls)
	return nil
}
