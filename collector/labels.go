package collector

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// maxLabelBytes bounds every label value taken from the cluster's data
// (comments, type names) so one odd event cannot blow up the exposition.
const maxLabelBytes = 128

// otherType is the event label used for types beyond the bound of distinct
// unknown names, or whose name does not look like a type name at all.
const otherType = "OTHER"

// knownTypes are the ten event types of the specification, in spec order.
// They are always exported (at 0) once a node has been contacted.
var knownTypes = []string{
	"CLUSTER_START", "CLUSTER_STOP", "NODE_DOWN", "CLUSTER_INIT", "MEMORY_LOW",
	"TABLE_LOADED", "HYPER_INDEX_LOADED", "HYPER_INDEX_UNLOADED", "SAVE_METADATA", "PRELOAD_FINISHED",
}

var knownTypeSet = func() map[string]bool {
	m := make(map[string]bool, len(knownTypes))
	for _, t := range knownTypes {
		m[t] = true
	}
	return m
}()

// typeNameRE is what a newer release's event type is expected to look like;
// anything else is noise and goes to OTHER.
var typeNameRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,63}$`)

// Label names whose values come from event comments, bounded per node.
const (
	labelIndex    = "index"
	labelTable    = "table"
	labelDownNode = "down_node"
)

// sanitizeLabel makes a comment usable as a label value: valid UTF-8 and at
// most maxLabelBytes bytes (cut on a rune boundary), surrounding blanks trimmed.
func sanitizeLabel(s string) string {
	s = strings.TrimSpace(strings.ToValidUTF8(s, "\uFFFD"))
	if len(s) <= maxLabelBytes {
		return s
	}
	cut := maxLabelBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// typeLabel returns the event label for an event type, admitting a new
// unknown name into the node's set while it has room (maxUnknown names).
func (st *nodeState) typeLabel(t string, maxUnknown int) string {
	if knownTypeSet[t] {
		return t
	}
	if !typeNameRE.MatchString(t) {
		return otherType
	}
	if _, ok := st.UnknownTypes[t]; ok {
		return t
	}
	if len(st.UnknownTypes) >= maxUnknown {
		return otherType
	}
	if st.UnknownTypes == nil {
		st.UnknownTypes = map[string]bool{}
	}
	st.UnknownTypes[t] = true
	return t
}

// admitLabel reports whether name may be used as a new key of a bounded
// label map of size n; existing keys are always admitted. A refusal is
// counted in Dropped when count is true (the event is being counted now, so
// the drop is counted once, not at every re-reading of the same event).
func (st *nodeState) admitLabel(label string, exists bool, n, max int, count bool) bool {
	if exists || n < max {
		return true
	}
	if count {
		if st.Dropped == nil {
			st.Dropped = map[string]uint64{}
		}
		st.Dropped[label]++
	}
	return false
}
