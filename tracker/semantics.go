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
}

func (s Semantics) mode() CountSemantics {
	if s.Mode == "" {
		return CountUnknown
	}
	return s.Mode
}

// vote takes one poll's evidence: running is the number of running events
// listed in the counted interval, dEx the count minus the known events,
// dIn the same minus running too. Without misses, a console that counts
// completed events gives dEx <= 0 (events completed between the count and
// the listing make it negative), one that counts running events gives
// dIn == 0 exactly; anything else (events missing, or a coincidence of
// both) is no evidence.
func (s *Semantics) vote(running, dEx, dIn int64) {
	if running == 0 {
		return // both semantics agree: no evidence
	}
	switch {
	case dEx <= 0:
		s.move(-1)
	case dIn == 0:
		s.move(+1)
	}
}

// futile takes a search that found nothing although dEx > 0 >= dIn: the
// "missing" events were the running ones.
func (s *Semantics) futile(dEx, dIn int64) {
	if dEx > 0 && dIn <= 0 {
		s.move(+1)
	}
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
func (s Semantics) Detected() CountSemantics { return s.mode() }
