package tracker

import "github.com/indexima-exporter/indexima_exporter/event"

// Running events that never complete.
//
// A running event that leaves the runnings and is not seen completed, even
// looked up, is given up (vanished.go): a cluster stop may have aborted it.
// The engine remembers it for a window: a console that counts running
// events may count such an event for ever ("events starting between :start
// and :end"), and it is none of the events the exporter missed. Counts are
// compared with the known events plus these on such a console, so that
// reported minus counted returns to 0 once they are given up; if one does
// complete after all, it is counted then, once.

// abandon remembers a given-up running event; not one at a millisecond
// the console will not list in full (unreadable.go counts those).
func (st *State) abandon(key string, pe PendingEvent) {
	if st.unreadableAt(pe.Date) > 0 {
		return
	}
	if st.Abandoned == nil {
		st.Abandoned = map[string]PendingEvent{}
	}
	if a, ok := st.Abandoned[key]; ok {
		pe.N += a.N
	} else if len(st.Abandoned) >= pendingCap {
		// Full: forget the oldest (it is the first to leave the window).
		oldest, ok := "", false
		for k, a := range st.Abandoned {
			if !ok || a.Date < st.Abandoned[oldest].Date {
				oldest, ok = k, true
			}
		}
		delete(st.Abandoned, oldest)
	}
	pe.Misses = 0
	st.Abandoned[key] = pe
}

// abandonedIn counts the given-up running events dated in [lo, hi].
func (st *State) abandonedIn(lo, hi int64) int64 {
	var n int64
	for _, a := range st.Abandoned {
		if a.Date >= lo && a.Date <= hi && st.unreadableAt(a.Date) == 0 {
			n += int64(a.N)
		}
	}
	return n
}

// vanishedIn counts the running events the engine waits for that the
// listing s no longer shows running, dated in [lo, hi]: they left the
// runnings but are not seen completed yet (vanished.go looks for them).
func (st *State) vanishedIn(lo, hi int64, s *listingReader) int64 {
	if s.inherit {
		return 0 // a listing that shows no running events tells none left
	}
	var n int64
	for key, pe := range st.Pending {
		if pe.Date < lo || pe.Date > hi || st.unreadableAt(pe.Date) > 0 {
			// (Events at a millisecond the console will not list in full
			// are counted there as unreadable, not as running.)
			continue
		}
		if r, ok := s.runningKeys[key]; ok {
			n += int64(max(pe.N-r.n, 0))
			continue
		}
		n += int64(pe.N)
	}
	return n
}

// resolveAbandoned removes one given-up event matching the completed event
// e, and reports whether there was one: it completed after all.
func (st *State) resolveAbandoned(e event.Event) bool {
	if len(st.Abandoned) == 0 {
		return false
	}
	for _, key := range []string{pendingKey(e.Type, e.Date, e.Comment), pendingKey(e.Type, e.Date, "")} {
		if a, ok := st.Abandoned[key]; ok {
			if a.N--; a.N <= 0 {
				delete(st.Abandoned, key)
			} else {
				st.Abandoned[key] = a
			}
			return true
		}
	}
	return false
}

// sealAbandoned forgets the given-up events dated before floor; on a
// console that counts running events they stay in its count of what left
// the window (the full check takes them out).
func (st *State) sealAbandoned(floor int64) {
	for key, a := range st.Abandoned {
		if a.Date < floor {
			if st.Semantics.includesRunning() {
				st.Check.AbandonedSealed += int64(a.N)
			}
			delete(st.Abandoned, key)
		}
	}
}
