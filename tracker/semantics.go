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
// A console can change it while serving (an upgrade, a restart), so the
// verdict follows the evidence:
//
//   - a count below the known events plus the running events listed that
//     surely started before it was taken (and the running events given up:
//     a console that counts running events counts those for ever) is a vote
//     for completed: races between the count and the listing are bounded
//     (listingReader.shortGap) and left out of the comparison. A vote decides a
//     console not told yet, two move a verdict of includes_running back
//     (one may be a count a forgetting console lowered); a count a
//     search takes after the listing, below the known and running events
//     of its range, decides completed at once (no race can make it);
//   - a search that reads every page the counts point at and still leaves
//     the count above the known events, while events are started and not
//     completed, decides includes_running at once: a count of completed
//     events holds nothing a listing does not show. A console switched to
//     it is followed within a poll.
type Semantics struct {
	Score int            `json:"score"` // -2..2: negative completed, positive includes running
	Mode  CountSemantics `json:"mode"`

	// Unlisted is set for a console that counts running events but never
	// lists them (runnings always empty): its running events cannot be told
	// from missing ones at the time they run. The count is then taken only
	// up to where every event has completed (settled), so that the check and
	// the self-check compare completed events with completed events.
	Unlisted      bool  `json:"unlisted,omitempty"`
	UnlistedScore int   `json:"unlisted_score,omitempty"` // 0..3
	RunningsAt    int64 `json:"runnings_at,omitempty"`    // console clock when running events were last listed
}

func (s Semantics) mode() CountSemantics {
	if s.Mode == "" {
		return CountUnknown
	}
	return s.Mode
}

// vote takes one poll's evidence for a count of completed events: excess
// is the count less the known events, expect the events that a console
// counting running events surely counted (running since before the count,
// given up), shortGap the events that may have started after the count and
// completed before the listing.
func (s *Semantics) vote(excess, expect, shortGap int64) {
	if expect > 0 && excess < expect-shortGap {
		s.move(-2)
	}
}

// inherited takes a count whose running events are known exactly (a
// count up to the previous listing's cursor, then a page that lists what
// completed since, poll.go): excess equal to them is a console that counts
// running events, excess of none one that does not. Decisive.
func (s *Semantics) inherited(excess, running int64) {
	switch {
	case running > 0 && excess == running:
		s.Score, s.Mode = 2, CountRunning
	case running > 0 && excess <= 0:
		s.Score, s.Mode = -2, CountCompleted
	}
}

// found takes a search that found events: more than beyond of them (the
// count's excess less the events started and not completed) cannot be if
// the console counts running events.
func (s *Semantics) found(n, running, beyond int64) {
	if running > 0 && n > beyond {
		s.move(-1)
	}
}

// searched takes a search that read every page the counts pointed at:
// excess is what the count still exceeds the known events by, unsettled the
// events started and not completed. A count of completed events holds none
// but events a listing shows: an excess left beside unsettled events means
// the console counts those (and perhaps events aborted before any listing
// showed them running, which it counts for ever and never lists). On a console that has listed no running event for an
// hour, an excess left is a vote for running events counted but not listed
// (or for events lost: both are then looked for once they must have
// completed, see countEnd).
func (s *Semantics) searched(excess, unsettled, clock int64) {
	if excess > 0 && unsettled > 0 {
		s.Score, s.Mode = 2, CountRunning
	}
	if excess > 0 && unsettled == 0 && (s.RunningsAt == 0 || clock-s.RunningsAt > slotMS*lateSlots) {
		s.UnlistedScore = min(s.UnlistedScore+1, 3)
		s.Unlisted = s.Unlisted || s.UnlistedScore >= 2
	}
}

// completedSeen takes a count, taken after a listing, below the known
// events plus the running ones that listing showed: a console that counts
// running events cannot give it. Decisive, as no race can make it.
func (s *Semantics) completedSeen() {
	s.Score, s.Mode = -2, CountCompleted
}

// runningsListed records that the console listed running events: it is not
// one that hides them.
func (s *Semantics) runningsListed(clock int64) {
	s.RunningsAt = clock
	s.Unlisted, s.UnlistedScore = false, 0
}

func (s *Semantics) move(d int) {
	s.Score = min(max(s.Score+d, -2), 2)
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

// Detected is the count semantics detected so far.
func (s Semantics) Detected() CountSemantics {
	if s.Unlisted {
		return CountRunning
	}
	return s.mode()
}
