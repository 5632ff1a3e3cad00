package tracker

import (
	"github.com/indexima-exporter/indexima_exporter/event"

	"github.com/indexima-exporter/indexima_exporter/tally"
)

// listingReader is the Handler of one listing response of a poll. It applies events
// to the poll's working state as they stream in (the working state is a
// clone, dropped if the poll fails) and keeps only bounded summaries.
type listingReader struct {
	p  *pollRun
	st *State

	mode readMode
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

	// since is the :time of a lastevents listing (sinceSet): an event
	// dated exactly then shows the console includes :time.
	since    int64
	sinceSet bool
	// inherit is set for a listing that shows no running events by design
	// (an asc page listing a poll, see poll): the running events are those
	// the previous listing showed, less those it completes.
	inherit bool
	// pageCut is set when such a page was cut at its :limit or the
	// console's page cap: the search reads the rest.
	pageCut bool

	// Summaries of reqs.
	reqs, fresh   int
	minDate       int64
	maxDate       int64
	maxNeed       int64 // largest lateness of a new event not waited for
	maxDuration   int64 // longest duration of the listing's events
	baselineDates []int64
	// unreadTaken counts, by millisecond, the events of this response
	// taken into the baseline (unreadBaselineAt) and not yet merged.
	unreadTaken  map[int64]int64
	runningKeys  map[string]*runningSeen // runnings by pending key (bounded by pendingCap)
	running      map[string]int          // runnings by type key (tally.TypeKey)
	runningDates []int64                 // start dates of the runnings (bounded by pendingCap)
	runnings     int
	overflow     bool // more runnings than could be tracked
	// clock is what the listing shows of the node's clock by the events it
	// shows for the first time (clocklag.go): events read again would tell
	// nothing.
	clock shownClock
	// latest is the latest date of any event the listing showed (read
	// before or not): the node's clock was at least there when it answered.
	latest    int64
	latestSet bool
	// shownBy is the latest time the listing shows the node's clock has
	// reached: the latest end of a completed event or start of a running
	// one (0: none). Unlike latest, it does not count completed events
	// the node may not have reached again (its clock went back).
	shownBy int64
	// freshEnds holds the dates and completion times of the events counted
	// (bounded): which of them may have completed between the poll's count
	// and its listing (raceCandidates, shortGap).
	freshEnds []freshEnd
	freshMore int // counted events beyond the bound of freshEnds
}

type freshEnd struct {
	date, end int64
	timed     bool // the event showed its duration: end is its completion
}

// maxFreshEnds bounds freshEnds; events beyond it are all taken as
// candidates (the safe side).
const maxFreshEnds = 4096

type readMode int

const (
	modeCount    readMode = iota // a poll: new events are counted
	modeBaseline                 // first contact: new events are the baseline
	modeRunnings                 // only runnings are taken (reqs ignored)
)

type runningSeen struct {
	e event.Event
	n int
}

func (p *pollRun) newReader(st *State, mode readMode) *listingReader {
	return &listingReader{p: p, st: st, mode: mode, cursor: st.Cursor, lateBefore: st.Cursor,
		runningKeys: map[string]*runningSeen{}, running: map[string]int{}}
}

// Event implements Handler for an element of reqs.
func (s *listingReader) Event(e event.Event) error {
	s.noteLatest(e.Date)
	if end := e.Date + max(e.Duration, 0); end > s.shownBy {
		s.shownBy = end
	}
	if s.mode == modeRunnings {
		return nil
	}
	if s.sinceSet && e.Date == s.since {
		s.st.Bounds.SinceInclusive = true
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
	st.NoteLastDate(e, lim)
	var down string // a NODE_DOWN's down node, named now (DownNodeName)
	if e.Type == "NODE_DOWN" {
		down = nameDownNode(s.p.o.DownNodeName, tally.DownNodeKey(e.Comment))
	}
	if s.mode == modeBaseline {
		if down != "" && e.Date > s.p.downReadTo {
			st.NoteNodeDown(down, e.Date, lim)
		}
		s.baselineEvent(e)
		return nil
	}
	waited := st.resolvePending(e) || st.resolveAbandoned(e)
	var isNew bool
	var nth int // place among identical events at its millisecond (CountedEvent.Nth)
	if e.Date >= st.Floor {
		baseline := !waited && st.unreadBaselineAt(e.Date, s.unreadTaken[e.Date])
		nth = st.Known.observe(&s.resp, kEntry{date: e.Date, fp: fingerprint(e)})
		isNew = nth > 0
		if down != "" && isNew {
			// Read for the first time (counted now, or one of the events
			// first contact could not read): named now.
			st.NoteNodeDown(down, e.Date, lim)
		}
		if isNew && baseline {
			// One of the events first contact could not read: not counted.
			s.baselineDates = append(s.baselineDates, e.Date)
			if s.unreadTaken == nil {
				s.unreadTaken = map[int64]int64{}
			}
			s.unreadTaken[e.Date]++
			isNew = false
		}
		if len(s.resp.added) >= knownSoftCap {
			s.p.flushKnown(st, &s.resp)
			clear(s.unreadTaken) // merged: Known holds them now
		}
	} else {
		// Too old to be told apart: read before, unless it is a running
		// event the engine waited for.
		isNew = waited
		if isNew {
			st.countedOutsideWindow(e.Date)
			nth = st.nthOutsideWindow(e)
			if down != "" {
				st.NoteNodeDown(down, e.Date, lim)
			}
		}
	}
	st.Apply(e, lim, isNew)
	if isNew {
		st.Count(e, down, lim)
		st.handOut(e, nth, down, s.p.o.HandOut)
		s.fresh++
		s.noteFresh(e)
		s.shownCompleted(e)
		if !waited && e.Date < s.lateBefore {
			s.maxNeed = max(s.maxNeed, s.cursor-e.Date)
		}
	}
	return nil
}

// baselineEvent takes an event of the first-contact look-back: known if in
// the window (so that it is never counted), applied to the state gauges if
// newer than the latest state reset.
func (s *listingReader) baselineEvent(e event.Event) {
	st := s.st
	if !s.resetSet || e.Date >= s.resetAt {
		st.Apply(e, s.p.o.Limits, false)
		if tally.ResetsState(e.Type) && !s.resetSet {
			s.resetAt, s.resetSet = e.Date, true
		}
	}
	// A completed event that a listed running event matches completed just
	// now, after first contact: it is not baseline, it will be counted.
	if e.Date < st.Floor || st.pendingOf(e) != "" {
		return
	}
	if st.Known.observe(&s.resp, kEntry{date: e.Date, fp: fingerprint(e)}) > 0 {
		s.baselineDates = append(s.baselineDates, e.Date)
	}
}

// Running implements Handler for an element of runnings.
func (s *listingReader) Running(e event.Event) error {
	s.noteLatest(e.Date)
	s.shownBy = max(s.shownBy, e.Date)
	s.runnings++
	s.running[s.st.TypeKey(e.Type, s.p.o.Limits.MaxEventTypes)]++
	key := pendingKey(e.Type, e.Date, e.Comment)
	if _, seen := s.st.Pending[key]; !seen {
		s.shownRunning(e.Date)
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
func (s *listingReader) end() {
	s.st.Known.end(&s.resp)
	if len(s.baselineDates) > 0 {
		s.st.Known.addBaseline(s.baselineDates)
		s.baselineDates = nil
	}
}

// runningIn counts the listed running events dated in [lo, hi].
func (s *listingReader) runningIn(lo, hi int64) int64 {
	var n int64
	if s.inherit {
		for _, pe := range s.st.Pending {
			if pe.Date >= lo && pe.Date <= hi {
				n += int64(pe.N)
			}
		}
		return n
	}
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
func (s *listingReader) commitRunnings() {
	if s.inherit {
		return
	}
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
// wait until the call succeeded, then go through the reader. A failed call
// then leaves the state as it was, so that what earlier calls of the poll
// read can be kept (PartialError).
type staged struct {
	s    *listingReader
	reqs []event.Event
	runs []event.Event
}

func (b *staged) Event(e event.Event) error   { b.reqs = append(b.reqs, e); return nil }
func (b *staged) Running(e event.Event) error { b.runs = append(b.runs, e); return nil }

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

// noteLatest records a date the answer showed.
func (s *listingReader) noteLatest(date int64) {
	if !s.latestSet || date > s.latest {
		s.latest, s.latestSet = date, true
	}
	s.p.noteNewest(date)
}

// noteFresh records when a counted event completed.
func (s *listingReader) noteFresh(e event.Event) {
	if len(s.freshEnds) >= maxFreshEnds {
		s.freshMore++
		return
	}
	end := e.Date
	if e.HasDuration && e.Duration > 0 {
		end += e.Duration
	}
	s.freshEnds = append(s.freshEnds, freshEnd{date: e.Date, end: end, timed: e.HasDuration})
}

// raceSlopMS is added to the time measured between a poll's count and its
// listing: the count's answer took time to arrive too.
const raceSlopMS = 100

// raceCandidates bounds how many of the events this listing counted may
// have completed after the count was taken, gap ms before it answered:
// those that completed later than the node's clock at the count, which was
// at least the latest date the listing shows less gap (and raceSlopMS). A count of completed events does not hold them, so a count
// below the known events by no more than these proves nothing.
func (s *listingReader) raceCandidates(gap int64) int64 {
	if !s.latestSet {
		return int64(s.fresh)
	}
	t1 := s.latest - gap - raceSlopMS
	n := int64(s.freshMore)
	for _, f := range s.freshEnds {
		if f.end > t1 {
			n++
		}
	}
	return n
}

// shortGap bounds how many of the events this listing counted may have
// started after the count and completed before the listing: a console that
// counts running events does not count them either.
func (s *listingReader) shortGap(gap int64) int64 {
	if !s.latestSet {
		return int64(s.fresh)
	}
	t1 := s.latest - gap - raceSlopMS
	n := int64(s.freshMore)
	for _, f := range s.freshEnds {
		if f.date > t1 && f.end-f.date <= gap+raceSlopMS {
			n++
		}
	}
	return n
}
