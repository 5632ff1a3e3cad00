package tally

import (
	"maps"
	"regexp"
	"strconv"
	"strings"

	"github.com/indexima-exporter/indexima_exporter/event"
)

// Tally is what a node's events mean: the counters of the events counted
// since first contact and the node's present state learned from every
// event read. It is plain data: the engine updates it, the collector reads
// it at scrape time, the state file saves it.
type Tally struct {
	// Counters (events completed after first contact, each once).
	Events           map[string]uint64     `json:"events"`    // by type key (TypeKey)
	Durations        map[string]*Histogram `json:"durations"` // by type key
	Reported         uint64                `json:"reported"`  // the console's own number (the engine's self-check)
	NodeDown         map[string]uint64     `json:"node_down"` // by down node (named when first read)
	MetadataUpgraded uint64                `json:"metadata_upgraded"`
	Dropped          map[string]uint64     `json:"dropped"` // names left out at the bound (Limits), by vocabulary
	// CursorRepairs counts the cursors found ahead of the console's clock
	// and repaired (the engine's guard).
	CursorRepairs uint64 `json:"cursor_repairs,omitempty"`

	// Gauges (learned from every listing, the look-back included).
	Running         map[string]int        `json:"running"`                  // by type key, from the latest runnings
	LastDate        map[string]int64      `json:"last_date"`                // by type key
	NodeDownLast    map[string]int64      `json:"node_down_last,omitempty"` // date of the latest NODE_DOWN, by down node (first reads: NoteNodeDown)
	Phase           DatedValue            `json:"phase"`                    // cluster state and the date that set it
	Indexes         map[string]IndexState `json:"indexes"`
	Tables          map[string]int64      `json:"tables"` // loaded table -> date of its TABLE_LOADED
	TablesClearedAt int64                 `json:"tables_cleared_at"`
	Preload         DatedNumber           `json:"preload"`
	UnknownTypes    map[string]bool       `json:"unknown_types"`

	// shared are the maps still those of the tally this one was cloned
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

// OtherType is the type key of types beyond the bound of distinct unknown
// names, or whose name does not look like a type name at all.
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
	event.ClusterStart:    StateStarting,
	event.PreloadFinished: StateReady,
	event.ClusterInit:     StateInitializing,
	event.ClusterStop:     StateStopped,
}

// ResetsState tells the events after which the cluster's state is learned
// again from scratch: the first-contact look-back stops at the latest one.
func ResetsState(typ string) bool {
	return typ == event.ClusterStart || typ == event.ClusterInit || typ == event.ClusterStop
}

// Limits bound the names a node's events may add to its tally, so that a
// node's state stays bounded whatever its console says.
type Limits struct {
	MaxNames      int // per node and vocabulary (tables, indexes, down nodes)
	MaxEventTypes int // distinct unknown type names before OTHER, per node
}

// TypeKey returns the key of an event type in the tally's maps: the type,
// or OtherType. A new unknown name is admitted into the node's set while it
// has room.
func (t *Tally) TypeKey(typ string, maxUnknown int) string {
	if event.IsKnown(typ) {
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

// admit reports whether a name may be used as a new key of the bounded map
// of a vocabulary (VocabTables, ...), of size n; existing keys are always admitted. A refusal
// is counted in Dropped when count is true (the event is being counted now,
// so the drop is counted once, not at every re-reading of the same event).
func (t *Tally) admit(vocab string, exists bool, n, limit int, count bool) bool {
	if exists || n < limit {
		return true
	}
	if count {
		t.own(partDropped)
		if t.Dropped == nil {
			t.Dropped = map[string]uint64{}
		}
		t.Dropped[vocab]++
	}
	return false
}

// NoteLastDate keeps the latest date of each event type.
func (t *Tally) NoteLastDate(e event.Event, lim Limits) {
	key := t.TypeKey(e.Type, lim.MaxEventTypes)
	if d, ok := t.LastDate[key]; !ok || e.Date > d {
		t.own(partLastDate)
		if t.LastDate == nil {
			t.LastDate = map[string]int64{}
		}
		t.LastDate[key] = e.Date
	}
}

// NoteNodeDown keeps the latest date of a NODE_DOWN per down node, by the
// name the report was given when it was first read. It
// learns from the reports read for the first time only, the first-contact
// look-back's included (so that a restart without the state file knows a
// recent report again): a report read again (the late window, a listing's
// slack, a restart with the state) is known under the name it was given
// then, and the configuration in force now may give its number to another
// node. The date decides, so reading a report twice changes nothing. A
// down node beyond the bound is left out here and counted as dropped by
// Count, once.
func (t *Tally) NoteNodeDown(name string, date int64, lim Limits) {
	d, ok := t.NodeDownLast[name]
	if !t.admit(VocabDownNodes, ok, len(t.NodeDownLast), lim.MaxNames, false) {
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

// Apply updates what a completed event tells about the node's present
// state. It is idempotent and decided by event date (the latest wins), so an
// event read twice, or out of order, changes nothing. count says whether the
// event is being counted now (only then is a dropped name counted).
func (t *Tally) Apply(e event.Event, lim Limits, count bool) {
	if s, ok := stateOfEvent[e.Type]; ok && e.Date >= t.Phase.Date {
		t.Phase = DatedValue{Value: s, Date: e.Date}
	}
	switch e.Type {
	case event.ClusterStart, event.ClusterStop:
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
	case event.TableLoaded:
		name := Name(e.Comment)
		if name == "" || e.Date < t.TablesClearedAt {
			return
		}
		d, ok := t.Tables[name]
		if !t.admit(VocabTables, ok, len(t.Tables), lim.MaxNames, count) {
			return
		}
		if !ok || e.Date > d {
			t.own(partTables)
			if t.Tables == nil {
				t.Tables = map[string]int64{}
			}
			t.Tables[name] = e.Date
		}
	case event.HyperIndexLoaded, event.HyperIndexUnloaded:
		name := Name(e.Comment)
		if name == "" {
			return
		}
		cur, ok := t.Indexes[name]
		if ok && cur.Date > e.Date {
			return
		}
		if !t.admit(VocabIndexes, ok, len(t.Indexes), lim.MaxNames, count) {
			return
		}
		now := IndexState{Loaded: e.Type == event.HyperIndexLoaded, Date: e.Date}
		if ok && cur == now {
			return // read again: nothing to write (and no copy to make, cow.go)
		}
		t.own(partIndexes)
		if t.Indexes == nil {
			t.Indexes = map[string]IndexState{}
		}
		t.Indexes[name] = now
	case event.PreloadFinished:
		if n, ok := parseCount(e.Comment); ok && (!t.Preload.Known || e.Date >= t.Preload.Date) {
			t.Preload = DatedNumber{Value: n, Date: e.Date, Known: true}
		}
	}
}

// Count adds a completed event to the counters. The engine calls it exactly
// once per event completed after first contact; down is a NODE_DOWN's down
// node, as named when first read.
func (t *Tally) Count(e event.Event, down string, lim Limits) {
	key := t.TypeKey(e.Type, lim.MaxEventTypes)
	t.own(partEvents)
	if t.Events == nil {
		t.Events = map[string]uint64{}
	}
	t.Events[key]++
	if e.HasDuration && e.Duration >= 0 {
		if t.Durations == nil {
			t.Durations = map[string]*Histogram{}
		}
		t.histogram(key).Observe(float64(e.Duration) / 1000)
	}
	switch e.Type {
	case event.NodeDown:
		_, ok := t.NodeDown[down]
		if t.admit(VocabDownNodes, ok, len(t.NodeDown), lim.MaxNames, true) {
			t.own(partDown)
			if t.NodeDown == nil {
				t.NodeDown = map[string]uint64{}
			}
			t.NodeDown[down]++
		}
	case event.SaveMetadata:
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
