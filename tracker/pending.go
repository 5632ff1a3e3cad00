package tracker

import (
	"strconv"

	"github.com/indexima-exporter/indexima_exporter/event"
)

// PendingEvent is a running event seen in a listing's runnings: it is
// counted once, when it is seen completed. Listings start early enough to
// list it again when it completes (Options.maxRelistMS); one that runs
// longer is looked up when it leaves the runnings.
type PendingEvent struct {
	Type    string `json:"type"`
	Date    int64  `json:"date"`
	Comment string `json:"comment"`
	N       int    `json:"n"`      // identical running events (same key)
	Misses  int    `json:"misses"` // polls since it left the runnings without being seen completed
}

func pendingKey(typ string, date int64, comment string) string {
	return typ + "\x00" + strconv.FormatInt(date, 10) + "\x00" + comment
}

// notePending remembers a running event (once per key and listing: n is how
// many identical ones this listing holds). It reports false when the bound
// is reached and the event cannot be tracked.
func (st *State) notePending(key string, e event.Event, n int) bool {
	if p, ok := st.Pending[key]; ok {
		p.N = max(p.N, n)
		p.Misses = 0
		st.Pending[key] = p
		return true
	}
	if len(st.Pending) >= pendingCap {
		return false
	}
	if st.Pending == nil {
		st.Pending = map[string]PendingEvent{}
	}
	st.Pending[key] = PendingEvent{Type: e.Type, Date: e.Date, Comment: e.Comment, N: n}
	return true
}

// pendingOf returns the key of the pending running event a completed event
// e completes ("" if none). A running event listed without its comment
// still matches on type and date.
func (st *State) pendingOf(e event.Event) string {
	if len(st.Pending) == 0 {
		return ""
	}
	key := pendingKey(e.Type, e.Date, e.Comment)
	if _, ok := st.Pending[key]; ok {
		return key
	}
	if e.Comment != "" {
		key = pendingKey(e.Type, e.Date, "")
		if _, ok := st.Pending[key]; ok {
			return key
		}
	}
	return ""
}

// resolvePending removes one pending running event matching the completed
// event e, and reports whether there was one.
func (st *State) resolvePending(e event.Event) bool {
	key := st.pendingOf(e)
	if key == "" {
		return false
	}
	p := st.Pending[key]
	if p.N--; p.N <= 0 {
		delete(st.Pending, key)
	} else {
		st.Pending[key] = p
	}
	return true
}

// oldestPending returns the earliest start of the pending events (ok false
// when there are none).
func (st *State) oldestPending() (int64, bool) {
	var oldest int64
	ok := false
	for _, p := range st.Pending {
		if !ok || p.Date < oldest {
			oldest, ok = p.Date, true
		}
	}
	return oldest, ok
}
