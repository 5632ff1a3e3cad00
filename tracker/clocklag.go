package tracker

import "github.com/indexima-exporter/indexima_exporter/event"

// The node's clock against the console's.
//
// The lag is the console's clock less the node's. Two clocks can be read:
// the console's, in the Date header of its answers (Info.Date), and the
// node's, in the dates of its events. `last` is not one of them (what it
// is, the specification leaves open). So the lag is bracketed by what each
// listing shows for the first time:
//
//   - An event shown for the first time by a listing that answered at
//     console time T had started by then, and completed by then if it is
//     shown completed: the lag is at most T less its start (less its
//     duration, in milliseconds, when shown completed).
//   - Such an event was not shown by the previous listing, taken at console
//     time T' and whole for its dates: it had not started yet (shown running
//     now), or not completed yet (shown completed now), so the lag is above
//     T' less that instant. This holds on a console that shows events as
//     soon as they start, or complete; a console that shows them later
//     makes the lag read higher by its delay, which is what the late window
//     has to cover all the same.
//
// Each poll gives one bracket (its events' bounds intersected), as wide as
// the time between two listings; the brackets of the last hour intersected
// (per 10-minute slot, so that the evidence ages out) narrow quickly on a
// busy node, and slowly on a quiet one. A poll whose bracket does not meet
// the others' means that a clock stepped (or that an event was shown late):
// it is held in doubt, and the next poll decides. A second poll that agrees
// with it and not with the older evidence, the two bounding the lag on both
// sides, drops the older evidence (a clock stepped: the lag reads the new
// one); one that agrees with the older evidence drops the doubt (an event
// shown late). A poll whose own bracket is empty (a step between its
// listing and the previous one, which mixes the clocks of before and after)
// is not used. A count that shows a node's clock went back
// (pollRun.forgotten) drops the evidence too.
//
// What the engine uses (Lateness.LagMS: how far ahead of the console's
// clock events may be dated, guard.go; the node's clock on a console that
// counts events it does not list, countEnd) is the upper side of the
// bracket: the largest lag the evidence allows, the safe side of both. What
// the exporter shows (State.ClockLag) is the middle of the bracket, only
// when it is at most lagPrecisionMS wide and no poll is in doubt.

// lagPrecisionMS is the widest bracket whose middle is shown as the lag:
// the lag shown is within half of it of the truth (on a console that shows
// events as they happen). A quiet node scraped seldom may never narrow to
// it: its lag is then not shown.
const lagPrecisionMS = 10_000

// dateResolutionMS is how far ahead of a Date header the console's clock
// may be: the header has whole seconds.
const dateResolutionMS = 1000

// lagBracket is an interval of the lag, in ms: above Lo (LoSet), at most
// Hi (HiSet). Zero: nothing known.
type lagBracket struct {
	Lo    int64 `json:"lo"`
	Hi    int64 `json:"hi"`
	LoSet bool  `json:"lo_set"`
	HiSet bool  `json:"hi_set"`
	// Since is the clock the engine learns by (State.refClock) when a
	// bracket in doubt was raised: it is dropped an hour later.
	Since int64 `json:"since"`
}

func (b lagBracket) set() bool { return b.LoSet || b.HiSet }

func (b lagBracket) closed() bool { return b.LoSet && b.HiSet }

func (b lagBracket) empty() bool { return b.closed() && b.Lo > b.Hi }

// meet is the intersection of b and c.
func (b lagBracket) meet(c lagBracket) lagBracket {
	if c.LoSet && (!b.LoSet || c.Lo > b.Lo) {
		b.Lo, b.LoSet = c.Lo, true
	}
	if c.HiSet && (!b.HiSet || c.Hi < b.Hi) {
		b.Hi, b.HiSet = c.Hi, true
	}
	return b
}

func (b lagBracket) meets(c lagBracket) bool { return !b.meet(c).empty() }

// clockEvidence is what the engine keeps of the lag besides the upper
// bounds (Lateness.Lag).
type clockEvidence struct {
	// Above holds per slot the largest lower bound of the lag a poll
	// showed.
	Above [lateSlots]slotValue `json:"above"`
	// Doubt is the bracket of the latest polls that disagree with the
	// evidence of the slots (unset: none).
	Doubt lagBracket `json:"doubt"`
	// Listed is the latest listing that showed every event visible at its
	// time and dated from From on: what it did not show was not visible
	// then. At is the console's clock when it was taken (its Date less the
	// call's time, ms). Unset: none (lower bounds wait for one).
	Listed wholeListing `json:"listed"`
}

type wholeListing struct {
	At   int64 `json:"at"`
	From int64 `json:"from"`
	Set  bool  `json:"set"`
}

// shownClock is what one listing shows of the node's clock, for the lag:
// over the events it shows for the first time, the latest instant of the
// node's clock they prove reached (a start, or a completion), and the
// earliest instant that the previous whole listing proves not reached yet.
type shownClock struct {
	reached, notBefore       int64
	reachedSet, notBeforeSet bool
}

func (c *shownClock) noteReached(t int64) {
	if !c.reachedSet || t > c.reached {
		c.reached, c.reachedSet = t, true
	}
}

func (c *shownClock) noteNotBefore(t int64) {
	if !c.notBeforeSet || t < c.notBefore {
		c.notBefore, c.notBeforeSet = t, true
	}
}

// shownCompleted records an event a listing shows completed for the first
// time (counted now, whether it was seen running before or not): its
// completion, when it has a duration; its start otherwise (an upper bound
// only).
func (s *listingReader) shownCompleted(e event.Event) {
	if !s.sinceSet {
		return // not a poll's lastevents listing (a page, a search, a look-up)
	}
	if !e.HasDuration {
		s.clock.noteReached(e.Date)
		return
	}
	end := e.Date + max(e.Duration, 0)
	s.clock.noteReached(end)
	if l := s.st.Lateness.Clock.Listed; l.Set && e.Date >= l.From {
		s.clock.noteNotBefore(end)
	}
}

// shownRunning records a running event a listing shows for the first time
// (not among the previous listing's runnings). Its start bounds the lag
// from below if the previous listing would have shown it had it started:
// it was in that listing's range, or the console lists every running event
// whatever the range (this listing shows one dated before its :time). Not
// if it may be an event shown before, running again (a node whose clock
// went back, in the simulator): it must be after every date shown before,
// or at a millisecond where no completed event is known.
func (s *listingReader) shownRunning(date int64) {
	if !s.sinceSet {
		return
	}
	s.clock.noteReached(date)
	st := s.st
	l := st.Lateness.Clock.Listed
	covered := l.Set && (date >= l.From || date < s.since)
	again := date <= st.Newest && (date < st.Floor || st.Known.countRange(date, date) > 0)
	if covered && !again {
		s.clock.noteNotBefore(date)
	}
}

// learnLag folds what the poll's listing showed of the node's clock into
// the lag, and records the listing for the next poll's lower bounds when it
// was whole: a lastevents listing (not a page) that was not cut, whose
// count showed nothing missing, at no cap. callMS is how long the listing
// took, from the request to the end of its answer.
func (p *pollRun) learnLag(st *State, s *listingReader, info ListingInfo, from, callMS int64, whole bool) {
	l := &st.Lateness
	callMS = max(callMS, 0)
	if !info.HasDate {
		l.Clock.Listed = wholeListing{}
		return
	}
	var b lagBracket
	if s.clock.reachedSet {
		// The listing was taken before it ended: the console's clock was
		// then at most its Date, a second (the header's resolution) and
		// the call's time.
		b.Hi, b.HiSet = info.Date+dateResolutionMS+callMS-s.clock.reached, true
	}
	if s.clock.notBeforeSet {
		b.Lo, b.LoSet = l.Clock.Listed.At-s.clock.notBefore, true
	}
	l.noteLag(st.refClock(), b)
	l.Clock.Listed = wholeListing{}
	if whole && s.sinceSet {
		// It was taken after the request went out: the console's clock was
		// then at least its Date less the call's time.
		l.Clock.Listed = wholeListing{At: info.Date - callMS, From: from, Set: true}
	}
}

// lagBracket is the bracket of the lag the slots of the last hour hold.
func (l *Lateness) lagBracket(ref int64) lagBracket {
	var b lagBracket
	for _, v := range l.Lag {
		if recent(v, ref) && (!b.HiSet || v.V < b.Hi) {
			b.Hi, b.HiSet = v.V, true
		}
	}
	for _, v := range l.Clock.Above {
		if recent(v, ref) && (!b.LoSet || v.V > b.Lo) {
			b.Lo, b.LoSet = v.V, true
		}
	}
	return b
}

// doubt is the bracket in doubt, unless it was raised more than an hour
// ago.
func (l *Lateness) doubt(ref int64) (lagBracket, bool) {
	d := l.Clock.Doubt
	if !d.set() || ref-d.Since >= lateSlots*slotMS {
		return lagBracket{}, false
	}
	return d, true
}

// noteLag folds one poll's bracket b into the evidence (see above).
func (l *Lateness) noteLag(ref int64, b lagBracket) {
	if !b.set() || b.empty() {
		return
	}
	cur := l.lagBracket(ref)
	d, doubt := l.doubt(ref)
	agrees, meetsDoubt := cur.meets(b), doubt && d.meets(b)
	switch {
	case agrees && meetsDoubt:
		// Wide enough to agree with both: the next polls decide.
		l.addLag(ref, b)
		l.Clock.Doubt = d.meet(b)
	case agrees:
		l.addLag(ref, b)
		l.Clock.Doubt = lagBracket{}
	case meetsDoubt && d.meet(b).closed():
		// Two polls agree with each other and not with the older evidence,
		// and bound the lag on both sides: a clock stepped. What was
		// learned before tells nothing of now. (Upper bounds alone do not
		// do: events that started before a step of the node's clock back
		// and completed after it are dated by the old clock, and every
		// poll for a while may show one.)
		b = d.meet(b)
		l.clockStepped()
		l.addLag(ref, b)
	case meetsDoubt:
		l.Clock.Doubt = d.meet(b)
	default:
		b.Since = ref
		l.Clock.Doubt = b
	}
	l.LagMS, l.LagKnown = l.lagBound(ref)
}

// clockStepped drops the evidence of the lag: a clock stepped, what it
// showed before tells nothing of now. The engine keeps the latest bound
// (LagMS) until new evidence comes.
func (l *Lateness) clockStepped() {
	l.Lag, l.Clock.Above, l.Clock.Doubt = [lateSlots]slotValue{}, [lateSlots]slotValue{}, lagBracket{}
}

// addLag narrows the bracket of ref's slot by b.
func (l *Lateness) addLag(ref int64, b lagBracket) {
	s := slotOf(ref)
	i := int(s%lateSlots+lateSlots) % lateSlots
	if b.HiSet {
		if v := &l.Lag[i]; !v.Set || v.Slot != s || b.Hi < v.V {
			*v = slotValue{Slot: s, V: b.Hi, Set: true}
		}
	}
	if b.LoSet {
		if v := &l.Clock.Above[i]; !v.Set || v.Slot != s || b.Lo > v.V {
			*v = slotValue{Slot: s, V: b.Lo, Set: true}
		}
	}
}

// lagBound is the largest lag the evidence allows: the upper side of the
// bracket, or of the one in doubt if higher. With no evidence in the last
// hour, the latest bound stands.
func (l *Lateness) lagBound(ref int64) (int64, bool) {
	b := l.lagBracket(ref)
	hi, ok := b.Hi, b.HiSet
	if d, doubt := l.doubt(ref); doubt && d.HiSet && (!ok || d.Hi > hi) {
		hi, ok = d.Hi, true
	}
	if !ok {
		return l.LagMS, l.LagKnown
	}
	return hi, true
}

// ClockLag is how far the node's clock is behind the console's, in ms
// (negative: ahead), as the listings of the last hour show it: the middle
// of their bracket, within lagPrecisionMS/2 of the lag. ok is false when it
// cannot be told that closely: no event shown for the first time in the
// last hour after a whole listing, a bracket still wider (a
// quiet node), a poll in doubt (a clock that stepped, not yet confirmed),
// or a console whose answers carry no Date.
func (st *State) ClockLag() (ms int64, ok bool) {
	l, ref := &st.Lateness, st.refClock()
	if _, doubt := l.doubt(ref); doubt {
		return 0, false
	}
	b := l.lagBracket(ref)
	if !b.closed() || b.Hi-b.Lo > lagPrecisionMS {
		return 0, false
	}
	return b.Lo + (b.Hi-b.Lo)/2, true
}
