package collector

// repair makes a node state read from a state file safe to use: the file
// may be from another version, edited by hand or damaged, and a bad value
// must not panic a scrape or break the exposition's bounds. Whatever cannot
// be trusted is dropped (a label forgotten, a histogram restarted).
func (st *nodeState) repair(lim limits) {
	for k, h := range st.Durations {
		switch {
		case h == nil || !validEventLabel(k):
			delete(st.Durations, k)
		default:
			h.rebin()
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
		if knownTypeSet[k] || !typeNameRE.MatchString(k) || len(st.UnknownTypes) > lim.maxEventTypes {
			delete(st.UnknownTypes, k)
		}
	}
	// Label values: as sanitizeLabel makes them, and no more of them than
	// this exporter's bound (else none: they are learned again from events).
	validValue := func(v string) bool { return v != "" && sanitizeLabel(v) == v }
	if dropBadKeys(st.Tables, validValue); len(st.Tables) > lim.maxLabelValues {
		st.Tables = nil
	}
	if dropBadKeys(st.Indexes, validValue); len(st.Indexes) > lim.maxLabelValues {
		st.Indexes = nil
	}
	if dropBadKeys(st.NodeDown, validValue); len(st.NodeDown) > lim.maxLabelValues {
		st.NodeDown = nil
	}
}

// validEventLabel tells whether k can be an event label value.
func validEventLabel(k string) bool {
	return knownTypeSet[k] || k == otherType || typeNameRE.MatchString(k)
}

func dropBadKeys[V any](m map[string]V, ok func(string) bool) {
	for k := range m {
		if !ok(k) {
			delete(m, k)
		}
	}
}
