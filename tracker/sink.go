package tracker

// sink is the Handler of one listing response of a poll. It applies events
// to the poll's working state as they stream in (the working state is a
// clone, dropped if the poll fails) and keeps only bounded summaries.
type sink struct {
	p  *poller
	st *State

	mode sinkMode
	// cursor is the cursor before the poll. A new event dated before
	// lateBefore, not waited for as running, was late: it was dated
	// cursor-date behind the cursor when found (lateness.go).
	cursor, lateBefore int64
	// resetAt is, during the look-back, the date of the latest event that
	// resets the cluster's state once met (older events then tell nothing
	// of the present state); unset: none met yet.
	resetAt  int64
	resetSet bool

	resp response

	// Summaries of reqs.
	reqs, fresh   int
	minDate       int64
	maxDate       int64
	maxNeed       int64 // largest lateness of a new event not waited for
	maxDuration   int64 // longest duration of the listing's events
	baselineDates []int64
	runningKeys   map[string]*runningSeen // runnings by pending key (bounded by pendingCap)
	running       map[string]int          // runnings by event label
	runningDates  []int64                 // start dates of the runnings (bounded by pendingCap)
	runnings      int
	overflow      bool // more runnings than could be tracked
	// newest is the latest date of what the listing shows for the first
	// time (an event counted, a running event not seen before): how far it
	// is behind `last` tells the node's clock lag (old events read again
	// would not).
	newest    int64
	newestSet bool
}

type sinkMode int

const (
	modeCount    sinkMode = iota // a poll: new events are counted
	modeBaseline                 // first contact: new events are the baseline
	modeRunnings                 // only runnings are taken (reqs ignored)
)

type runningSeen struct {
	e Event
	n int
}

func (p *poller) newSink(st *State, mode sinkMode) *sink {
	return &sink{p: p, st: st, mode: mode, cursor: st.Cursor, lateBefore: st.Cursor,
		runningKeys: map[string]*runningSeen{}, running: map[string]int{}}
}

// Event implements Handler for an element of reqs.
func (s *sink) Event(e Event) error {
	if s.mode == modeRunnings {
		return nil
	}
	if s.reqs == 0 || e.Date < s.minDate {
		s.minDate = e.Date
	}
	if s.reqs == 0 || e.Date > s.maxDate {
		s.maxDate = e.Date
	}
	s.reqs++
	if e.HasDuration && e.Duration > s.maxDuration {
		s.maxDuration = e.Duration
	}
	st, lim := s.st, s.p.o.Limits
	st.noteLastDate(e, lim)
	if s.mode == modeBaseline {
		s.baselineEvent(e)
		return nil
	}
	waited := st.resolvePending(e)
	var isNew bool
	if e.Date >= st.Floor {
		isNew = st.Known.observe(&s.resp, kEntry{date: e.Date, fp: fingerprint(e)})
		if len(s.resp.added) >= knownSoftCap {
			s.p.flushKnown(st, &s.resp)
		}
	} else {
		// Too old to be told apart: read before, unless it is a running
		// event the engine waited for, and not one seen running again only
		// because the node's clock went back over it.
		isNew = waited && !st.completedBeforeRewind(e)
		if isNew {
			st.countedOutsideWindow(e.Date)
		}
	}
	st.applyState(e, lim, isNew)
	if isNew {
		st.countEvent(e, lim)
		s.fresh++
		s.noteNewest(e.Date)
		if !waited && e.Date < s.lateBefore {
			s.maxNeed = max(s.maxNeed, s.cursor-e.Date)
		}
	}
	return nil
}

// baselineEvent takes an event of the first-contact look-back: known if in
// the window (so that it is never counted), applied to the state gauges if
// newer than the latest state reset.
func (s *sink) baselineEvent(e Event) {
	st := s.st
	if !s.resetSet || e.Date >= s.resetAt {
		st.applyState(e, s.p.o.Limits, false)
		if resetsState(e.Type) && !s.resetSet {
			s.resetAt, s.resetSet = e.Date, true
		}
	}
	// A completed event that a listed running event matches completed just
	// now, after first contact: it is not baseline, it will be counted.
	if e.Date < st.Floor || st.pendingOf(e) != "" {
		return
	}
	if st.Known.observe(&s.resp, kEntry{date: e.Date, fp: fingerprint(e)}) {
		s.baselineDates = append(s.baselineDates, e.Date)
	}
}

// Running implements Handler for an element of runnings.
func (s *sink) Running(e Event) error {
	s.runnings++
	s.running[s.st.typeLabel(e.Type, s.p.o.Limits.MaxEventTypes)]++
	key := pendingKey(e.Type, e.Date, e.Comment)
	if _, seen := s.st.Pending[key]; !seen {
		s.noteNewest(e.Date)
	}
	if r, ok := s.runningKeys[key]; ok {
		r.n++
		s.runningDates = append(s.runningDates, e.Date)
	} else if len(s.runningKeys) < pendingCap {
		s.runningKeys[key] = &runningSeen{e: e, n: 1}
		s.runningDates = append(s.runningDates, e.Date)
	} else {
		s.overflow = true
	}
	return nil
}

// end closes the response: its new known events are merged.
func (s *sink) end() {
	s.st.Known.end(&s.resp)
	if len(s.baselineDates) > 0 {
		s.st.Known.addBaseline(s.baselineDates)
		s.baselineDates = nil
	}
}

// runningIn counts the listed running events dated in [lo, hi].
func (s *sink) runningIn(lo, hi int64) int64 {
	var n int64
	for _, d := range s.runningDates {
		if d >= lo && d <= hi {
			n++
		}
	}
	return n
}

// commitRunnings makes this listing's runnings the node's running gauge and
// pending set: a pending event no longer running has left the runnings
// without being seen completed (it is looked for, see vanished).
func (s *sink) commitRunnings() {
	st := s.st
	st.Running = s.running
	for key, r := range s.runningKeys {
		if !st.notePending(key, r.e, r.n) {
			s.overflow = true
		}
	}
}

// staged is the Handler of a call whose events must apply all or nothing
// while the poll goes on (the pages of a search, the look-ups): its events
// wait until the call succeeded, then go through the sink. A failed call
// then leaves the state as it was, so that what earlier calls of the poll
// read can be kept (PartialError).
type staged struct {
	s    *sink
	reqs []Event
	runs []Event
}

func (b *staged) Event(e Event) error   { b.reqs = append(b.reqs, e); return nil }
func (b *staged) Running(e Event) error { b.runs = append(b.runs, e); return nil }

// commit applies the call's events.
func (b *staged) commit() {
	for _, e := range b.reqs {
		_ = b.s.Event(e)
	}
	for _, e := range b.runs {
		_ = b.s.Running(e)
	}
	b.s.end()
}

func (s *sink) noteNewest(date int64) {
	if !s.newestSet || date > s.newest {
		s.newest, s.newestSet = date, true
	}
}
