package tally

import (
	"maps"
	"slices"
)

// The engine's poll works on a copy of the node's state and commits it
// whole or not at all. The tally's maps are copied only when the poll
// writes to them, each on its first write (copy on write): most polls
// count an event or two of one type and see no table, index, unknown type
// or NODE_DOWN, and the running gauge is replaced, not written. Copying
// them all at every poll was about a tenth of the bytes a scrape of 200
// nodes allocated (docs/performance.md, issue 39). Every write to one of
// these maps is preceded by own (the writers are in tally.go; Repair and
// RenameDownNodes own them all, and a caller outside the package that
// writes a map calls Own first); the engine's tests check at every poll
// that the state a poll was given is left unchanged.

// tallyParts are the maps of a Tally still shared with the state it was
// cloned from.
type tallyParts uint8

const (
	partEvents tallyParts = 1 << iota
	partDurations
	partDown // NodeDown and NodeDownLast
	partDropped
	partLastDate
	partIndexes
	partTables
	partUnknownTypes
	allParts = partEvents | partDurations | partDown | partDropped | partLastDate | partIndexes | partTables | partUnknownTypes
)

// Clone returns a copy of t for a poll to work on, sharing its maps until
// written (own). A nil map becomes an empty one, as a deep copy made it
// (the state file writes {} rather than null).
func (t Tally) Clone() Tally {
	c := t
	c.shared, c.ownedHists = allParts, nil
	if c.Events == nil {
		c.Events = map[string]uint64{}
	}
	if c.Durations == nil {
		c.Durations = map[string]*Histogram{}
	}
	if c.NodeDown == nil {
		c.NodeDown = map[string]uint64{}
	}
	if c.Dropped == nil {
		c.Dropped = map[string]uint64{}
	}
	if c.Running == nil {
		c.Running = map[string]int{}
	}
	if c.LastDate == nil {
		c.LastDate = map[string]int64{}
	}
	if c.Indexes == nil {
		c.Indexes = map[string]IndexState{}
	}
	if c.Tables == nil {
		c.Tables = map[string]int64{}
	}
	if c.UnknownTypes == nil {
		c.UnknownTypes = map[string]bool{}
	}
	return c
}

// Own makes every map the tally's own: a caller outside the package that
// writes a map itself calls it first.
func (t *Tally) Own() { t.own(allParts) }

// own makes the maps of parts the tally's own before a write.
func (t *Tally) own(parts tallyParts) {
	parts &= t.shared
	if parts == 0 {
		return
	}
	t.shared &^= parts
	if parts&partEvents != 0 {
		t.Events = cloneVocab(t.Events)
	}
	if parts&partDurations != 0 {
		t.Durations = cloneVocab(t.Durations) // the histograms: histogram
	}
	if parts&partDown != 0 {
		t.NodeDown = cloneVocab(t.NodeDown)
		if t.NodeDownLast != nil {
			t.NodeDownLast = maps.Clone(t.NodeDownLast)
		}
	}
	if parts&partDropped != 0 {
		t.Dropped = cloneVocab(t.Dropped)
	}
	if parts&partLastDate != 0 {
		t.LastDate = cloneVocab(t.LastDate)
	}
	if parts&partIndexes != 0 {
		t.Indexes = cloneVocab(t.Indexes)
	}
	if parts&partTables != 0 {
		t.Tables = cloneVocab(t.Tables)
	}
	if parts&partUnknownTypes != 0 {
		t.UnknownTypes = cloneVocab(t.UnknownTypes)
	}
}

// histogram returns the duration histogram of label to observe into: the
// tally's own (copied on the poll's first write to it), made when missing.
func (t *Tally) histogram(label string) *Histogram {
	t.own(partDurations)
	h := t.Durations[label]
	if h != nil && slices.Contains(t.ownedHists, h) {
		return h
	}
	if h == nil {
		h = &Histogram{}
	} else {
		h = h.clone()
	}
	t.Durations[label] = h
	t.ownedHists = append(t.ownedHists, h)
	return h
}
