package tally

import "github.com/indexima-exporter/indexima_exporter/event"

// Repair makes a tally read from a state file safe to use: the file may be
// from another version, edited by hand or damaged, and a bad key must not
// break the bounds of what a node keeps. Whatever cannot be trusted is
// dropped (a name forgotten, a histogram restarted); lostDownDates reports
// that the dates of the latest NODE_DOWN reports were dropped (the engine
// learns them again).
func (t *Tally) Repair(lim Limits) (lostDownDates bool) {
	t.own(allParts) // a clone's maps are copied before they are written (cow.go)
	for k, h := range t.Durations {
		switch {
		case h == nil || !validTypeKey(k):
			delete(t.Durations, k)
		default:
			t.histogram(k).rebin()
		}
	}
	dropBadKeys(t.Events, validTypeKey)
	dropBadKeys(t.Running, validTypeKey)
	dropBadKeys(t.LastDate, validTypeKey)
	for k := range t.UnknownTypes {
		if event.IsKnown(k) || !typeNameRE.MatchString(k) || len(t.UnknownTypes) > lim.MaxEventTypes {
			delete(t.UnknownTypes, k)
		}
	}
	// Names: as Name makes them, and no more of them than this exporter's
	// bound (else none: they are learned again from events).
	validName := func(v string) bool { return v != "" && Name(v) == v }
	if dropBadKeys(t.Tables, validName); len(t.Tables) > lim.MaxNames {
		t.Tables = nil
	}
	if dropBadKeys(t.Indexes, validName); len(t.Indexes) > lim.MaxNames {
		t.Indexes = nil
	}
	if dropBadKeys(t.NodeDown, validName); len(t.NodeDown) > lim.MaxNames {
		t.NodeDown = nil
	}
	if dropBadKeys(t.NodeDownLast, validName); len(t.NodeDownLast) > lim.MaxNames {
		t.NodeDownLast = nil
		lostDownDates = true
	}
	return lostDownDates
}

// RenameDownNodes gives the down nodes their names by name (a state of an
// earlier schema kept them by key): reports that name one node merge, their
// counts added and the latest date kept.
func (t *Tally) RenameDownNodes(name func(key string) string) {
	t.own(partDown)
	if len(t.NodeDown) > 0 {
		named := make(map[string]uint64, len(t.NodeDown))
		for k, n := range t.NodeDown {
			named[name(k)] += n
		}
		t.NodeDown = named
	}
	if len(t.NodeDownLast) > 0 {
		named := make(map[string]int64, len(t.NodeDownLast))
		for k, date := range t.NodeDownLast {
			n := name(k)
			if d, ok := named[n]; !ok || date > d {
				named[n] = date
			}
		}
		t.NodeDownLast = named
	}
}

// validTypeKey tells whether k can be a type key (TypeKey).
func validTypeKey(k string) bool {
	return event.IsKnown(k) || k == OtherType || typeNameRE.MatchString(k)
}

func dropBadKeys[V any](m map[string]V, ok func(string) bool) {
	for k := range m {
		if !ok(k) {
			delete(m, k)
		}
	}
}
