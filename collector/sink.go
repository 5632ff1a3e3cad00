package collector

import (
	"github.com/indexima-exporter/indexima_exporter/apiclient"
)

// topDatesCap bounds the dates a sink keeps to tell how many events of a
// listing lie beyond its `last` (only known once the body is read).
const topDatesCap = 64

// sink is the ListingHandler of one response of a poll. It applies events to
// the poll's working state as they stream in (the working state is a clone,
// discarded if the poll fails), and keeps only bounded summaries.
type sink struct {
	p        *poller
	st       *nodeState
	counting bool  // false at first contact: learn state, count nothing
	lower    int64 // query start: events dated >= lower are "of this listing's range"

	// Summaries of reqs.
	reqs, newEvents int
	geLower         int                     // reqs dated >= lower
	top             minHeap                 // the largest dates (bounded)
	minDate         int64                   // of reqs
	maxDate         int64                   // of reqs
	runningKeys     map[string]*runningSeen // runnings by pending key (bounded by pendingCap)
	running         map[string]int          // runnings by event label
	overflow        bool                    // more runnings than could be tracked
}

func newSink(p *poller, st *nodeState, counting bool, lower int64) *sink {
	return &sink{p: p, st: st, counting: counting, lower: lower,
		runningKeys: map[string]*runningSeen{}, running: map[string]int{}}
}

// Event implements apiclient.ListingHandler for an element of reqs.
func (s *sink) Event(e apiclient.Event) error {
	if s.reqs == 0 || e.Date < s.minDate {
		s.minDate = e.Date
	}
	if s.reqs == 0 || e.Date > s.maxDate {
		s.maxDate = e.Date
	}
	s.reqs++
	if e.Date >= s.lower {
		s.geLower++
		if len(s.top) < topDatesCap {
			s.top.push(e.Date)
		} else if e.Date > s.top[0] {
			s.top[0] = e.Date
			s.top.down(0)
		}
	}
	if s.p.observe(s.st, e, s.counting) {
		s.newEvents++
	}
	return nil
}

// Running implements apiclient.ListingHandler for an element of runnings.
func (s *sink) Running(e apiclient.Event) error {
	s.running[s.st.typeLabel(e.Type, s.p.lim.maxEventTypes)]++
	key := pendingKey(e.Type, e.Date, e.Comment)
	if r, ok := s.runningKeys[key]; ok {
		r.n++
	} else if len(s.runningKeys) < pendingCap {
		s.runningKeys[key] = &runningSeen{e: e, n: 1}
	} else {
		s.overflow = true
	}
	return nil
}

// inRange returns the number of reqs dated in [lower, last], and false when
// it cannot be told (too many events dated after last).
func (s *sink) inRange(last int64) (int, bool) {
	beyond := 0
	for _, d := range s.top {
		if d > last {
			beyond++
		}
	}
	if beyond == topDatesCap {
		return 0, false
	}
	return s.geLower - beyond, true
}

// commitRunnings makes this listing's runnings the node's running gauge and
// its pending set; it is called for the main listing of a poll only.
func (s *sink) commitRunnings() {
	s.st.Running = s.running
	for key, r := range s.runningKeys {
		if !s.st.notePending(key, r.e, r.n) {
			s.overflow = true
		}
	}
}

type runningSeen struct {
	e apiclient.Event
	n int
}

// minHeap is a min-heap of dates, hand-written rather than container/heap:
// it is updated for nearly every event of a listing, and Push(any) would
// allocate each time.
type minHeap []int64

func (h *minHeap) push(x int64) {
	*h = append(*h, x)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if a[p] <= a[i] {
			break
		}
		a[p], a[i] = a[i], a[p]
		i = p
	}
}

func (h minHeap) down(i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h[r] < h[l] {
			m = r
		}
		if h[i] <= h[m] {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
