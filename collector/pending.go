package collector

import (
	"strconv"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
)

// Bounds of the running-event tracking, per node.
const (
	pendingCap       = 256    // running events remembered (a cluster start runs a few dozen)
	pendingMaxMisses = 5      // polls a vanished running event is looked up before it is given up
	lookupsPerPoll   = 20     // lookups of vanished running events per poll (the rest wait)
	lookupLimit      = 1000   // :limit of a lookup (events starting at one millisecond)
	lookupSpan       = 60_000 // ms of start dates one lookup covers (the vanished events in it resolve too)
)

// pendingEvent is a running event seen in a listing's runnings: it is
// counted once, when it is seen completed.
type pendingEvent struct {
	Type    string `json:"type"`
	Date    int64  `json:"date"`
	Comment string `json:"comment"`
	N       int    `json:"n"`      // identical running events (same key)
	Misses  int    `json:"misses"` // lookups that found it neither completed nor running
}

func pendingKey(typ string, date int64, comment string) string {
	return typ + "\x00" + strconv.FormatInt(date, 10) + "\x00" + comment
}

// notePending remembers a running event (once per key and listing: n is how
// many identical ones this listing holds). It reports false when the bound
// is reached and the event cannot be tracked.
func (st *nodeState) notePending(key string, e apiclient.Event, n int) bool {
	if p, ok := st.Pending[key]; ok {
		if n > p.N {
			p.N = n
		}
		p.Misses = 0
		st.Pending[key] = p
		return true
	}
	if len(st.Pending) >= pendingCap {
		return false
	}
	if st.Pending == nil {
		st.Pending = map[string]pendingEvent{}
	}
	st.Pending[key] = pendingEvent{Type: e.Type, Date: e.Date, Comment: e.Comment, N: n}
	return true
}

// resolvePending removes one pending running event matching the completed
// event e, and reports whether there was one. A running event listed without
// its comment still matches on type and date.
func (st *nodeState) resolvePending(e apiclient.Event) bool {
	if len(st.Pending) == 0 {
		return false
	}
	key := pendingKey(e.Type, e.Date, e.Comment)
	p, ok := st.Pending[key]
	if !ok && e.Comment != "" {
		key = pendingKey(e.Type, e.Date, "")
		p, ok = st.Pending[key]
	}
	if !ok {
		return false
	}
	p.N--
	if p.N <= 0 {
		delete(st.Pending, key)
	} else {
		st.Pending[key] = p
	}
	return true
}
