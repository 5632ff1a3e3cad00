package tracker

import (
	"maps"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/indexima-exporter/indexima_exporter/event"
)

// Tally is what a node's events mean: the counters of the events counted
// since first contact and the gauges of the node's present state learned
// from every event read. It is plain data: the collector reads it at scrape
// time, the state file saves it.
type Tally struct {
	// Counters (events completed after first contact, each once).
	Events           map[string]uint64     `json:"events"`    // by event label
	Durations        map[string]*Histogram `json:"durations"` // by event label
	Reported         uint64                `json:"reported"`  // the console's own number (selfcheck.go)
	NodeDown         map[string]uint64     `json:"node_down"` // by down node (named when first read: DownNodeNamer)
	MetadataUpgraded uint64                `json:"metadata_upgraded"`
	Dropped          map[string]uint64     `json:"dropped"` // label values dropped, by label name
	// CursorRepairs counts the cursors found ahead of the console's clock
	// and repaired (guard.go).
	CursorRepairs uint64 `json:"cursor_repairs,omitempty"`

	// Gauges (learned from every listing, the look-back included).
	Running         map[string]int        `json:"running"`                  // by event label, from the latest runnings
	LastDate        map[string]int64      `json:"last_date"`                // by event label
	NodeDownLast    map[string]int64      `json:"node_down_last,omitempty"` // date of the latest NODE_DOWN, by down node (first reads: noteNodeDown)
	Phase           DatedValue            `json:"phase"`                    // cluster state and the date that set it
	Indexes         map[string]IndexState `json:"indexes"`
	Tables          map[string]int64      `json:"tables"` // loaded table -> date of its TABLE_LOADED
	TablesClearedAt int64                 `json:"tables_cleared_at"`
	Preload         DatedNumber           `json:"preload"`
	UnknownTypes    map[string]bool       `json:"unknown_types"`

	// shared are the maps still those of the state this tally was cloned
	// from, which own copies before a write (cow.go); ownedHists the
	// histograms copied since.
	shared     tallyParts
	ownedHists []*Histogram
}

// DatedValue is a value and the date of the event that set it.
type DatedValue struct {
	Value string `json:"value"`
	Date  int64  `json:"date"`
}

// DatedNumber is a number and the date of the event that set it.
type DatedNumber struct {
	Value int64 `json:"value"`
	Date  int64 `json:"date"`
	Known bool  `json:"known"`
}

// IndexState is a hyperindex's latest known state.
type IndexState struct {
	Loaded bool  `json:"loaded"`
	Date   int64 `json:"date"`
}

// KnownTypes are the ten event types of the specification, in spec order.
var KnownTypes = []string{
	"CLUSTER_START", "CLUSTER_STOP", "NODE_DOWN", "CLUSTER_INIT", "MEMORY_LOW",
	"TABLE_LOADED", "HYPER_INDEX_LOADED", "HYPER_INDEX_UNLOADED", "SAVE_METADATA", "PRELOAD_FINISHED",
}

var knownTypeSet = func() map[string]bool {
	m := make(map[string]bool, len(KnownTypes))
	for _, t := range KnownTypes {
		m[t] = true
	}
	return m
}()

// OtherType is the event label of types beyond the bound of distinct
// unknown names, or whose name does not look like a type name at all.
const OtherType = "OTHER"

// typeNameRE is what a newer release's event type is expected to look like;
// anything else is noise and goes to OTHER.
var typeNameRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,63}$`)

// Cluster states, and the event that enters each.
const (
	StateStarting     = "starting"
	StateReady        = "ready"
	StateInitializing = "initializing"
	StateStopped      = "stopped"
	StateUnknown      = "unknown"
)

// ClusterStates lists the cluster states (a state set).
var ClusterStates = []string{StateStarting, StateReady, StateInitializing, StateStopped, StateUnknown}

var stateOfEvent = map[string]string{
	"CLUSTER_START":    StateStarting,
	"PRELOAD_FINISHED": StateReady,
	"CLUSTER_INIT":     StateInitializing,
	"CLUSTER_STOP":     StateStopped,
}

// resetsState tells the events after which the cluster's state is learned
// again from scratch: the first-contact look-back stops at the latest one.
func resetsState(typ string) bool {
	return typ == "CLUSTER_START" || typ == "CLUSTER_INIT" || typ == "CLUSTER_STOP"
}

// Label names whose values come from event comments, bounded per node.
const (
	LabelIndex    = "index"
	LabelTable    = "table"
	LabelDownNode = "down_node"
)

// maxLabelBytes bounds every label value taken from the cluster's data.
const maxLabelBytes = 128

// SanitizeLabel makes a comment usable as a label value: valid UTF-8 and at
// most 128 bytes (cut on a rune boundary), surrounding blanks trimmed.
func SanitizeLabel(s string) string {
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
// unknown name into the node's set while it has room.
func (t *Tally) typeLabel(typ string, maxUnknown int) string {
	if knownTypeSet[typ] {
		return typ
	}
	if !typeNameRE.MatchString(typ) {
		return OtherType
	}
	if _, ok := t.UnknownTypes[typ]; ok {
		return typ
	}
	if len(t.UnknownTypes) >= maxUnknown {
		return OtherType
	}
	t.own(partUnknownTypes)
	if t.UnknownTypes == nil {
		t.UnknownTypes = map[string]bool{}
	}
	t.UnknownTypes[typ] = true
	return typ
}

// admitLabel reports whether name may be used as a new key of a bounded
// label map of size n; existing keys are always admitted. A refusal is
// counted in Dropped when count is true (the event is being counted now, so
// the drop is counted once, not at every re-reading of the same event).
func (t *Tally) admitLabel(label string, exists bool, n, max int, count bool) bool {
	if exists || n < max {
		return true
	}
	if count {
		t.own(partDropped)
		if t.Dropped == nil {
			t.Dropped = map[string]uint64{}
		}
		t.Dropped[label]++
	}
	return false
}

// noteLastDate keeps the latest date of each event type.
func (t *Tally) noteLastDate(e event.Event, lim Limits) {
	label := t.typeLabel(e.Type, lim.MaxEventTypes)
	if d, ok := t.LastDate[label]; !ok || e.Date > d {
		t.own(partLastDate)
		if t.LastDate == nil {
			t.LastDate = map[string]int64{}
		}
		t.LastDate[label] = e.Date
	}
}

// noteNodeDown keeps the latest date of a NODE_DOWN per down node, by the
// name the report was given when it was first read (downNodeName). It
// learns from the reports read for the first time only, the first-contact
// look-back's included (so that a restart without the state file knows a
// recent report again): a report read again (the late window, a listing's
// slack, a restart with the state) is known under the name it was given
// then, and the configuration in force now may give its number to another
// node. The date decides, so reading a report twice changes nothing. A
// down node beyond the bound is left out here and counted as dropped by
// countEvent, once.
func (t *Tally) noteNodeDown(name string, date int64, lim Limits) {
	d, ok := t.NodeDownLast[name]
	if !t.admitLabel(LabelDownNode, ok, len(t.NodeDownLast), lim.MaxLabelValues, false) {
		return
	}
	if ok && date <= d {
		return
	}
	t.own(partDown)
	if t.NodeDownLast == nil {
		t.NodeDownLast = map[string]int64{}
	}
	t.NodeDownLast[name] = date
}

// DownNodeKey is the down-node key of a NODE_DOWN comment: the comment as
// a label value (the node's number, in the specification), "unknown" when
// empty. Options.DownNodeName names a node from it.
func DownNodeKey(comment string) string {
	if name := SanitizeLabel(comment); name != "" {
		return name
	}
	return "unknown"
}

// nameDownNode is the name of the down node of key by name (nil: the key),
// as a label value; the key when the name is empty.
func nameDownNode(name DownNodeNamer, key string) string {
	if name == nil {
		return key
	}
	if n := SanitizeLabel(name(key)); n != "" {
		return n
	}
	return key
}

// NodeNumber reads a down-node key as the number of the node reported
// down (a NODE_DOWN comment is one, spec section 6); ok is false for a key
// that is no number.
func NodeNumber(key string) (n int, ok bool) {
	n, err := strconv.Atoi(key)
	return n, err == nil
}

// applyState updates what a completed event tells about the node's present
// state. It is idempotent and decided by event date (the latest wins), so an
// event read twice, or out of order, changes nothing. count says whether the
// event is being counted now (only then is a dropped label counted).
func (t *Tally) applyState(e event.Event, lim Limits, count bool) {
	if s, ok := stateOfEvent[e.Type]; ok && e.Date >= t.Phase.Date {
		t.Phase = DatedValue{Value: s, Date: e.Date}
	}
	switch e.Type {
	case "CLUSTER_START", "CLUSTER_STOP":
		// A (re)start or a stop unloads every table.
		if e.Date > t.TablesClearedAt {
			t.TablesClearedAt = e.Date
			if len(t.Tables) > 0 {
				t.own(partTables)
			}
			for name, d := range t.Tables {
				if d < e.Date {
					delete(t.Tables, name)
				}
			}
		}
	case "TABLE_LOADED":
		name := SanitizeLabel(e.Comment)
		if name == "" || e.Date < t.TablesClearedAt {
			return
		}
		d, ok := t.Tables[name]
		if !t.admitLabel(LabelTable, ok, len(t.Tables), lim.MaxLabelValues, count) {
			return
		}
		if !ok || e.Date > d {
			t.own(partTables)
			if t.Tables == nil {
				t.Tables = map[string]int64{}
			}
			t.Tables[name] = e.Date
		}
	case "HYPER_INDEX_LOADED", "HYPER_INDEX_UNLOADED":
		name := SanitizeLabel(e.Comment)
		if name == "" {
			return
		}
		cur, ok := t.Indexes[name]
		if ok && cur.Date > e.Date {
			return
		}
		if !t.admitLabel(LabelIndex, ok, len(t.Indexes), lim.MaxLabelValues, count) {
			return
		}
		now := IndexState{Loaded: e.Type == "HYPER_INDEX_LOADED", Date: e.Date}
		if ok && cur == now {
			return // read again: nothing to write (and no copy to make, cow.go)
		}
		t.own(partIndexes)
		if t.Indexes == nil {
			t.Indexes = map[string]IndexState{}
		}
		t.Indexes[name] = now
	case "PRELOAD_FINISHED":
		if n, ok := parseCount(e.Comment); ok && (!t.Preload.Known || e.Date >= t.Preload.Date) {
			t.Preload = DatedNumber{Value: n, Date: e.Date, Known: true}
		}
	}
}

// countEvent adds a completed event to the counters. Called exactly once per
// event completed after first contact; down is a NODE_DOWN's down node, as
// named when first read.
func (t *Tally) countEvent(e event.Event, down string, lim Limits) {
	label := t.typeLabel(e.Type, lim.MaxEventTypes)
	t.own(partEvents)
	if t.Events == nil {
		t.Events = map[string]uint64{}
	}
	t.Events[label]++
	if e.HasDuration && e.Duration >= 0 {
		if t.Durations == nil {
			t.Durations = map[string]*Histogram{}
		}
		t.histogram(label).Observe(float64(e.Duration) / 1000)
	}
	switch e.Type {
	case "NODE_DOWN":
		_, ok := t.NodeDown[down]
		if t.admitLabel(LabelDownNode, ok, len(t.NodeDown), lim.MaxLabelValues, true) {
			t.own(partDown)
			if t.NodeDown == nil {
				t.NodeDown = map[string]uint64{}
			}
			t.NodeDown[down]++
		}
	case "SAVE_METADATA":
		if n, ok := parseCount(e.Comment); ok {
			t.MetadataUpgraded += uint64(n)
		}
	}
}

// parseCount reads a comment holding a number of tables or indexes; anything
// else (empty, text, negative) carries no number.
func parseCount(s string) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// cloneVocab copies a map of the tally (never nil: an empty map for nil).
// Their keys are bounded vocabularies (event types, down nodes, indexes,
// tables: Limits), so maps.Clone, which copies the map's table as it is
// instead of inserting every entry again, keeps no oversized table; it
// halves the cost of the state copy of every poll.
func cloneVocab[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return maps.Clone(m)
}

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	c := make(map[K]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
