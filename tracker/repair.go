package tracker

import "slices"

// Repair makes a state read from a state file safe to use: the file may be
// from another version, edited by hand or damaged, and a bad value must not
// panic a poll or break the exposition's bounds. Whatever cannot be trusted
// is dropped (a label forgotten, a histogram restarted). A state of format 1
// (a dedup set instead of the known events) is converted.
func (st *State) Repair(lim Limits) {
	if st.Legacy != nil {
		st.fromLegacy()
	}
	if st.Floor == 0 {
		// No window in the file (written by hand, or of a format that had
		// none): nothing dated before the cursor is counted again.
		st.Floor, st.Origin = st.Cursor, st.Cursor
		st.Check.LastFull = st.Cursor
	}
	st.own(allParts) // a clone's maps are copied before they are written (cow.go)
	for k, h := range st.Durations {
		switch {
		case h == nil || !validEventLabel(k):
			delete(st.Durations, k)
		default:
			st.histogram(k).rebin()
		}
	}
	for k, p := range st.Pending {
		if p.N <= 0 || len(st.Pending) > pendingCap {
			delete(st.Pending, k)
		}
	}
	dropBadKeys(st.Events, validEventLabel)
	dropBadKeys(st.Running, validEventLabel)
	dropBadKeys(st.LastDate, validEventLabel)
	for k := range st.UnknownTypes {
		if knownTypeSet[k] || !typeNameRE.MatchString(k) || len(st.UnknownTypes) > lim.MaxEventTypes {
			delete(st.UnknownTypes, k)
		}
	}
	// Label values: as SanitizeLabel makes them, and no more of them than
	// this exporter's bound (else none: they are learned again from events).
	validValue := func(v string) bool { return v != "" && SanitizeLabel(v) == v }
	if dropBadKeys(st.Tables, validValue); len(st.Tables) > lim.MaxLabelValues {
		st.Tables = nil
	}
	if dropBadKeys(st.Indexes, validValue); len(st.Indexes) > lim.MaxLabelValues {
		st.Indexes = nil
	}
	if dropBadKeys(st.NodeDown, validValue); len(st.NodeDown) > lim.MaxLabelValues {
		st.NodeDown = nil
	}
	if dropBadKeys(st.NodeDownLast, validValue); len(st.NodeDownLast) > lim.MaxLabelValues {
		st.NodeDownLast = nil
		st.RelearnNodeDown = st.Contacted // learned again by a look-back (relearn.go)
	}
	// The window's invariants: nothing known below the floor, the origin
	// not after it, books not negative.
	st.Known.trimBelow(st.Floor)
	st.Origin = min(st.Origin, st.Floor)
	if st.Unread.Set && st.Unread.From > st.Unread.To {
		st.Unread = Interval{}
	}
	st.Check.Sealed = max(st.Check.Sealed, 0)
	st.Check.BaselineSealed = max(st.Check.BaselineSealed, 0)
	st.Check.Outside = max(st.Check.Outside, 0)
	switch st.Semantics.Mode {
	case "", CountUnknown, CountCompleted, CountRunning:
	default:
		st.Semantics = Semantics{}
	}
	st.Semantics.Score = min(max(st.Semantics.Score, -2), 2)
	for k, a := range st.Abandoned {
		if a.N <= 0 || len(st.Abandoned) > pendingCap || a.Date < st.Floor {
			delete(st.Abandoned, k)
		}
	}
	for d, u := range st.Unreadable {
		if u.Events <= 0 || u.Known < 0 || d < st.Floor || len(st.Unreadable) > pendingCap {
			delete(st.Unreadable, d)
		}
	}
	st.Retention.AgeMS = max(st.Retention.AgeMS, 0)
	st.Retention.Keep = max(st.Retention.Keep, 0)
	st.Retention.StepMS = max(st.Retention.StepMS, 0)
	st.Retention.PerPoll = max(st.Retention.PerPoll, 0)
	st.Retention.Wait = min(max(st.Retention.Wait, 0), 4)
	st.ListCap, st.PageCap = max(st.ListCap, 0), max(st.PageCap, 0)
	if st.Schema < 0 || st.Schema > Schema {
		// Not one this version writes (the state store refuses a newer
		// one): taken for an earlier one, and upgraded (Upgrade).
		st.Schema = 0
	}
}

// validEventLabel tells whether k can be an event label value.
func validEventLabel(k string) bool {
	return knownTypeSet[k] || k == OtherType || typeNameRE.MatchString(k)
}

func dropBadKeys[V any](m map[string]V, ok func(string) bool) {
	for k := range m {
		if !ok(k) {
			delete(m, k)
		}
	}
}

// legacySeen is the dedup set of format 1: fingerprints with their dates
// and multiplicity, and the floor below which events were taken as read.
type legacySeen struct {
	Floor   int64                      `json:"floor"`
	Entries map[uint64]legacySeenEntry `json:"entries"`
}

type legacySeenEntry struct {
	Date  int64 `json:"date"`
	Count int32 `json:"count"`
}

// fromLegacy turns a format-1 dedup set into known events: same
// fingerprints, same multiplicity, same floor. The books start at the
// floor, holding what was reported then (the self-check of format 1 summed
// counts of intervals; it goes on from that sum).
func (st *State) fromLegacy() {
	l := st.Legacy
	st.Legacy = nil
	st.Known = known{}
	for fp, e := range l.Entries {
		if e.Date < l.Floor {
			continue
		}
		for i := int32(0); i < min(e.Count, 1<<16); i++ {
			st.Known.entries = append(st.Known.entries, kEntry{date: e.Date, fp: fp})
		}
	}
	slices.SortFunc(st.Known.entries, cmpEntry)
	st.Floor, st.Origin = l.Floor, l.Floor
	st.Check = SelfCheck{LastFull: st.Cursor,
		Sealed: max(0, int64(st.Reported)-int64(len(st.Known.entries)))}
}
