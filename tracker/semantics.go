package tracker

// CountSemantics is what a console's event/count counts: the specification
// says "number of events starting between :start and :end" and leaves open
// whether events still running are included.
type CountSemantics string

const (
	CountUnknown   CountSemantics = "unknown"          // not told yet (or never: no running events listed)
	CountCompleted CountSemantics = "completed"        // completed events only
	CountRunning   CountSemantics = "includes_running" // running events too
)

// Semantics is the detection of a node's count semantics from its answers.
// Each poll with running events in the counted interval is a vote: the
// count taken just before the listing equals the known events (completed
// only) or the known events plus the running ones (includes running); a
// race between the two calls can make one vote wrong, so the verdict needs
// a margin of two votes, and contrary votes move it back (a console
// upgraded or restarted with another behaviour is detected again).
type Semantics struct {
	Score int            `json:"score"` // -3..3: negative completed, positive includes running
	Mode  CountSemantics `json:"mode"`

	// Unlisted is set for a console that counts running events but never
	// lists them (runnings always empty): its running events cannot be told
	// from missing ones at the time they run. The count is then taken only
	// up to where every event has completed (settled), so that the check and
	// the self-check compare completed events with completed events.
	Unlisted      bool  `json:"unlisted,omitempty"`
	UnlistedScore int   `json:"unlisted_score,omitempty"` // 0..3
	RunningsAt    int64 `json:"runnings_at,omitempty"`    // cursor when running events were last listed
}

func (s Semantics) mode() CountSemantics {
	if s.Mode == "" {
		return CountUnknown
	}
	return s.Mode
}

// vote takes one poll's evidence: running is the number of running events
// listed in the counted interval, dEx the count minus the known events,
// dIn the same minus running too. A console that counts running events
// cannot give dEx <= 0 while running events are listed: that is evidence
// of a count of completed events. The other way, a count equal to the known
// events plus the running ones is no evidence by itself (missing events can
// number as many as the running ones): the search tells (found, futile).
func (s *Semantics) vote(running, dEx, dIn int64) {
	if running > 0 && dEx <= 0 {
		s.move(-1)
	}
}

// found takes a search that found events: more than dIn of them (with
// running events listed) cannot be if the console counts running events.
func (s *Semantics) found(n, running, dIn int64) {
	if running > 0 && n > dIn {
		s.move(-1)
	}
}

// futile takes a search that found nothing although dEx > 0 >= dIn: the
// "missing" events were the running ones. On a console that has listed no
// running event for an hour, a futile search is a vote for running events
// counted but not listed (or for events lost: both are then looked for once
// they must have completed, see settledEnd).
func (s *Semantics) futile(dEx, dIn, cursor int64) {
	if dEx > 0 && dIn <= 0 {
		s.move(+1)
	}
	if dEx > 0 && (s.RunningsAt == 0 || cursor-s.RunningsAt > slotMS*lateSlots) {
		s.UnlistedScore = min(s.UnlistedScore+1, 3)
		s.Unlisted = s.Unlisted || s.UnlistedScore >= 2
	}
}

// runningsListed records that the console listed running events: it is not
// one that hides them.
func (s *Semantics) runningsListed(cursor int64) {
	s.RunningsAt = cursor
	s.Unlisted, s.UnlistedScore = false, 0
}

func (s *Semantics) move(d int) {
	s.Score = min(max(s.Score+d, -3), 3)
	switch {
	case s.Score >= 2:
		s.Mode = CountRunning
	case s.Score <= -2:
		s.Mode = CountCompleted
	}
}

// includesRunning tells whether the console is known to count running
// events: only then are they taken out of its counts when looking for
// missing events (until it is known, a deficit is looked for).
func (s *Semantics) includesRunning() bool { return s.mode() == CountRunning }

// subtractsRunning tells whether running events are taken out of the
// console's counts for the self-check: unless the console is known to
// count completed events only (the safe side: Reported is a counter, a
// value too high could not be taken back).
func (s *Semantics) subtractsRunning() bool { return s.mode() != CountCompleted }

// deficit is how many counted events the engine does not know. Until the
// console is known to count running events, they are taken as missing: a
// console that does costs one search that finds nothing (which also tells
// its semantics), a miss is never hidden behind running events.
func (s *Semantics) deficit(dEx, dIn int64) int64 {
	if s.includesRunning() {
		return dIn
	}
	return dEx
}

// Detected is the count semantics detected so far.
func (s Semantics) Detected() CountSemantics {
	if s.Unlisted {
		return CountRunning
	}
	return s.mode()
}
