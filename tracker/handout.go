package tracker

import "github.com/indexima-exporter/indexima_exporter/event"

// CountedEvent is one event a poll counted, handed out in its Report so that the
// caller can keep or write the event itself, not only the counters: the
// engine counts each event exactly once, so each is handed out once, by the
// poll whose state holds it.
type CountedEvent struct {
	event.Event
	// Nth tells identical events (same type, date, duration and comment)
	// apart: this one is the Nth of them at its millisecond, 1 for the
	// first. Together with the event it names the event in the node's log
	// whichever poll counts it: the same state, polled again after a crash
	// of the exporter, hands the same event out with the same Nth.
	Nth int
	// DownNode is a NODE_DOWN's down node, as the engine named it when it
	// read the event (Options.DownNodeName): the down_node of its counters.
	DownNode string
}

// handOut records a counted event in the working state, keeping the
// latest keep of them (every one when keep is negative, Options.HandOut);
// Poll moves the record into its Report. It lives on the state, not on the
// poll, so that a state thrown away (a poll started again from a clean copy)
// takes its events with it. A bounded record stays bounded through a
// backlog of any size: reading one must not hold it in memory.
func (st *State) handOut(e event.Event, nth int, down string, keep int) {
	if keep == 0 {
		return
	}
	if keep > 0 && len(st.counted) >= 2*keep {
		n := copy(st.counted, st.counted[len(st.counted)-keep+1:])
		clear(st.counted[n:])
		st.counted = st.counted[:n]
	}
	st.counted = append(st.counted, CountedEvent{Event: e, Nth: nth, DownNode: down})
}

// takeCounted returns the events counted into the state (the latest keep
// of them) and forgets them, so that a committed state holds none.
func (st *State) takeCounted(keep int) []CountedEvent {
	c := st.counted
	if keep >= 0 && len(c) > keep {
		c = c[len(c)-keep:]
	}
	st.counted, st.outside = nil, nil
	return c
}

// nthOutsideWindow is the place among identical events of one counted
// although dated before the floor (a running event waited for): the known
// events no longer tell it, so those of the same poll do. Two identical
// events dated before the floor and completed in different polls get the
// same place; their running events had the same pending key and the same
// duration, which the engine cannot tell apart either.
func (st *State) nthOutsideWindow(e event.Event) int {
	k := kEntry{date: e.Date, fp: fingerprint(e)}
	if st.outside == nil {
		st.outside = map[kEntry]int{}
	}
	st.outside[k]++
	return st.outside[k]
}
