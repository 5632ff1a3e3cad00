package tracker

import "github.com/go-kit/log/level"

// Events the console counts but never lists.
//
// A console whose :limit has a silent maximum cannot list more than that
// many events of one millisecond by any page: a batch logged at one
// millisecond beyond it is counted but never read in full by pages (a
// lastevents listing without a cap may still deliver it). The search finds
// where (a millisecond paged whole that still falls short of its count) and
// the engine remembers it: the shortfall is taken out of the counts it
// compares (so it does not search for it at every poll), less whatever of
// it is read later, and kept in the self-check (so reported minus counted
// shows it, for as long as the console counts it and after: it is sealed
// into the books as missed).

// Unread is the shortfall of one millisecond: Events the console counted
// there beyond the Known events then. Baseline marks a millisecond of the
// first contact's look-back that its pages could not read whole: those
// events happened before first contact, so they are neither counted (one
// read later is taken into the baseline) nor reported.
type Unread struct {
	Events   int64 `json:"events"`
	Known    int64 `json:"known"`
	Baseline bool  `json:"baseline,omitempty"`
}

// left is what is still unread of it.
func (u Unread) left(st *State, m int64) int64 {
	return max(0, u.Events-(st.Known.countRange(m, m)-u.Known))
}

// noteUnreadable records that the millisecond m holds short events the
// console counts but will not list.
func (p *pollRun) noteUnreadable(st *State, m, short int64) {
	if short <= 0 || st.unreadableAt(m) >= short {
		return
	}
	if st.Unreadable == nil {
		st.Unreadable = map[int64]Unread{}
	}
	level.Warn(p.o.Logger).Log("msg", "events at one millisecond that the console counts but does not list in full (a silent maximum of :limit below them): reported, not counted",
		"date", m, "events", short)
	st.Unreadable[m] = Unread{Events: short, Known: st.Known.countRange(m, m)}
	// What it counts and does not list was these, not running events it
	// hides: a verdict of the kind is taken back (votes come back if it
	// does hide them).
	st.Semantics.Unlisted, st.Semantics.UnlistedScore = false, 0
}

// unreadableAt counts the unread events at m.
func (st *State) unreadableAt(m int64) int64 {
	u, ok := st.Unreadable[m]
	if !ok {
		return 0
	}
	return u.left(st, m)
}

// unreadableIn counts the unread events dated in [lo, hi].
func (st *State) unreadableIn(lo, hi int64) int64 {
	var n int64
	for m, u := range st.Unreadable {
		if m >= lo && m <= hi {
			n += u.left(st, m)
		}
	}
	return n
}

// missedUnreadableIn counts the unread events dated in [lo, hi] that are
// not baseline: the self-check reports them.
func (st *State) missedUnreadableIn(lo, hi int64) int64 {
	var n int64
	for m, u := range st.Unreadable {
		if m >= lo && m <= hi && !u.Baseline {
			n += u.left(st, m)
		}
	}
	return n
}

// unreadBaselineAt tells whether an event read at m that the engine did
// not know is one of the baseline events first contact could not read;
// taken is how many of them the response being read took already.
func (st *State) unreadBaselineAt(m, taken int64) bool {
	u, ok := st.Unreadable[m]
	return ok && u.Baseline && u.left(st, m)-taken > 0
}

// noteUnreadBaseline records that first contact's pages moved past the
// millisecond m without reading all that the console counts there (a
// silent maximum of :limit below them).
func (p *pollRun) noteUnreadBaseline(st *State, m, short int64) {
	if short <= 0 {
		return
	}
	if st.Unreadable == nil {
		st.Unreadable = map[int64]Unread{}
	}
	level.Info(p.o.Logger).Log("msg", "first contact: events at one millisecond that the console counts but does not list in full are baseline (neither counted nor reported)",
		"date", m, "events", short)
	st.Unreadable[m] = Unread{Events: short, Known: st.Known.countRange(m, m), Baseline: true}
}

// sealUnreadable moves the unread events dated before floor into the books
// as missed: the console's count of the window no longer holds them.
func (st *State) sealUnreadable(floor int64) {
	for m, u := range st.Unreadable {
		if m < floor {
			n := u.left(st, m)
			if u.Baseline {
				st.Check.BaselineSealed += n
			} else {
				st.Check.Sealed += n
				st.Check.Missed += n
			}
			delete(st.Unreadable, m)
		}
	}
}
