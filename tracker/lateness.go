package tracker

// Lateness is what the engine learned of how late a node's events become
// visible, and of its clock against the console's. Both are kept per
// 10-minute slot of the reference clock (State.refClock: the console's
// clock at the latest poll, the cursor until a poll has set it) over the
// last hour, so they follow a node that changes (a clock fixed, a quiet
// night).
type Lateness struct {
	// Need holds per slot the largest "need": how far behind the previous
	// cursor a new event was dated when it was found, not having been seen
	// running (an event listed only once completed, a node whose clock lags).
	// A lastevents listing that starts that far back finds such events
	// without a search.
	Need [lateSlots]slotValue `json:"need"`
	// Lag holds per slot the smallest upper bound of the node's clock lag
	// (the console's clock less the node's, ms) a poll showed, and Clock
	// the rest of what was learned of it (clocklag.go). LagMS is the
	// largest lag that evidence allows (the upper side of its bracket), the
	// latest one when the last hour showed none: the safe side of what the
	// engine derives from it (guard.go, countEnd). LagKnown: some poll
	// showed one.
	Lag      [lateSlots]slotValue `json:"lag"`
	LagMS    int64                `json:"lag_ms"`
	LagKnown bool                 `json:"lag_known"`
	Clock    clockEvidence        `json:"clock"`
	// Dur holds per slot the longest duration of the events read: on a
	// console that hides its running events, how long after its start an
	// event may still be running.
	Dur [lateSlots]slotValue `json:"dur"`
}

const (
	lateSlots  = 6
	slotMS     = 10 * 60 * 1000
	slackRatio = 1.25
)

type slotValue struct {
	Slot int64 `json:"slot"`
	V    int64 `json:"v"`
	Set  bool  `json:"set"`
}

func slotOf(t int64) int64 {
	if t < 0 {
		return -1
	}
	return t / slotMS
}

// noteNeed records, in the slot of ref (State.refClock), that an event was
// found need ms behind the cursor.
func (l *Lateness) noteNeed(ref, need int64) {
	s := slotOf(ref)
	v := &l.Need[int(s%lateSlots+lateSlots)%lateSlots]
	if !v.Set || v.Slot != s {
		*v = slotValue{Slot: s, V: need, Set: true}
	} else if need > v.V {
		v.V = need
	}
}

// noteDuration records the longest duration of a listing's events, in the
// slot of ref (State.refClock).
func (l *Lateness) noteDuration(ref, d int64) {
	s := slotOf(ref)
	v := &l.Dur[int(s%lateSlots+lateSlots)%lateSlots]
	if !v.Set || v.Slot != s {
		*v = slotValue{Slot: s, V: d, Set: true}
	} else if d > v.V {
		v.V = d
	}
}

// settle is how long after its start an event has surely completed: the
// longest duration of the last hour with a quarter of margin, at least 10 s,
// at most bound; ref is State.refClock.
func (l *Lateness) settle(ref, bound int64) int64 {
	var d int64
	for _, v := range l.Dur {
		if recent(v, ref) && v.V > d {
			d = v.V
		}
	}
	return min(max(int64(float64(d)*slackRatio), 10_000), max(bound, 10_000))
}

func recent(v slotValue, now int64) bool {
	s := slotOf(now)
	return v.Set && v.Slot <= s && v.Slot > s-lateSlots
}

// slack is how far behind the cursor the next lastevents listing starts:
// the largest need of the last hour with some margin, at least 2 s (a
// console whose lastevents excludes its `:time`, events dated a little
// behind), at most max; ref is State.refClock.
func (l *Lateness) slack(ref, bound int64) int64 {
	var need int64
	for _, v := range l.Need {
		if recent(v, ref) && v.V > need {
			need = v.V
		}
	}
	s := int64(float64(need)*slackRatio) + minSlackMS
	return min(s, max(bound, minSlackMS))
}
