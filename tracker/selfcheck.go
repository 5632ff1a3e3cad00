package tracker

// SelfCheck keeps the books of the self-check: Reported is the console's own
// number of the node's events that completed after first contact, from its
// event/count answers, so that Reported minus the counted events is 0
// exactly when nothing was missed (docs/counting.md).
//
// The console is asked each poll for the count of the window [Floor, ...]
// (the call that also tells the poll whether events are missing). What
// leaves the window is sealed into these books with what the engine knew of
// it; once per late window a full check asks for the count of everything
// since first contact before the window, which shows events that became
// visible later than the window allows (they cannot be counted any more,
// but they are reported).
type SelfCheck struct {
	// Sealed is the console's number of completed, non-baseline events
	// dated in [Origin, Floor).
	Sealed int64 `json:"sealed"`
	// BaselineSealed is the number of baseline events dated in [Origin, Floor).
	BaselineSealed int64 `json:"baseline_sealed"`
	// Outside counts the events counted although dated before Origin
	// (running at first contact for longer than the window).
	Outside int64 `json:"outside"`
	// LastFull is the cursor at the latest full check.
	LastFull int64 `json:"last_full"`
	// Missed is what the full checks found beyond the window, and the
	// events the console counted but never listed (unreadable.go) once
	// they left it.
	Missed int64 `json:"missed"`
	// AbandonedSealed counts the given-up running events (abandoned.go)
	// that left the window while the console counted running events: its
	// count of what left the window holds them.
	AbandonedSealed int64 `json:"abandoned_sealed,omitempty"`
}

// Futile remembers a search that found nothing although the count said
// events were missing (a console whose count and listings disagree, or one
// that counts running events without listing them): the same deficit is not
// searched again at every poll, but after 1, 2, 4, ... 64 polls. A poll
// whose count shows nothing missing, another deficit (some events found or
// new ones missing), or a change of the count semantics end the backoff.
type Futile struct {
	Deficit int64          `json:"deficit"`
	Beyond  int64          `json:"beyond"` // the deficit beyond the running events listed then
	Streak  int            `json:"streak"`
	Skip    int            `json:"skip"`
	Mode    CountSemantics `json:"mode"`
}

// shouldSearch tells whether a deficit is worth a search now; beyond is the
// deficit less the running events listed in the window (a running event
// that completed and left the deficit where it was does not hide a miss).
func (f *Futile) shouldSearch(deficit, beyond int64, mode CountSemantics) bool {
	if deficit <= 0 || mode != f.Mode || beyond > f.Beyond {
		*f = Futile{}
		return deficit > 0
	}
	if f.Skip > 0 && deficit == f.Deficit {
		f.Skip--
		return false
	}
	return true
}

// searched records the outcome of a search: deficit is what it left
// unexplained.
func (f *Futile) searched(deficit, beyond int64, found int, mode CountSemantics) {
	if found > 0 || deficit <= 0 {
		*f = Futile{}
		return
	}
	f.Streak = min(f.Streak+1, 6)
	f.Skip = 1 << f.Streak
	f.Deficit, f.Beyond, f.Mode = deficit, beyond, mode
}

// report sets Reported from this poll's count: what the engine counted
// (the sealed books, and the events it knows in the window that are not
// baseline) plus excess, the events of the checked interval the console
// counts and the engine has not read, less the events started and not
// completed that the console may count: always those that left the
// runnings lately (an aborted one never completes; one that completed is
// read within a few polls), and the running and given-up ones unless the
// console is known to count completed events only. Reported minus counted
// is then what the console holds that the engine missed, never more.
// Reported is a counter: it never goes down.
func (st *State) report(excess int64, u unsettled) {
	c := st.Check.Sealed + st.Check.Outside + st.Known.countRange(st.Floor, maxInt64) - st.Known.baselineFrom(st.Floor) + excess - u.vanished
	if st.Semantics.subtractsRunning() {
		c -= u.running + u.abandoned
	}
	if c > int64(st.Reported) {
		st.Reported = uint64(c)
	}
}

// reportCounted raises Reported to the events counted, at the end of every
// poll that returns a state: each counted event is one the console holds,
// completed after first contact, so its own number is at least that. The
// count of a poll is taken before its listing (poll.go): an event that
// completed in between is counted by this poll and in the console's count
// only from the next one; and until the count semantics are known the
// running events are taken out of the count. Without this, reported minus
// counted would dip below 0 for a poll in both cases, and an operator
// could not read the difference at any scrape. It never hides a miss: the
// next count holds the counted events and the missed ones both.
func (st *State) reportCounted() {
	var counted uint64
	for _, n := range st.Events {
		counted += n
	}
	st.Reported = max(st.Reported, counted)
}

// seal moves the floor up to floor: the known events below it are sealed
// into the books and forgotten.
func (st *State) seal(floor int64) {
	if floor <= st.Floor {
		return
	}
	removed, removedBaseline := st.Known.trimBelow(floor)
	st.Check.Sealed += removed - removedBaseline
	st.Check.BaselineSealed += removedBaseline
	st.sealAbandoned(floor)
	st.sealUnreadable(floor)
	st.Floor = floor
}

// countedOutsideWindow books an event counted although dated before the
// floor (a running event the engine waited for): the console's count of
// its sealed interval grew by one when it completed.
func (st *State) countedOutsideWindow(date int64) {
	if date >= st.Origin {
		st.Check.Sealed++
	} else {
		st.Check.Outside++
	}
}
