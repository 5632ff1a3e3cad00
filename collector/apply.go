package collector

import (
	"strconv"
	"strings"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
)

// limits are the per-node bounds applied while events are applied.
type limits struct {
	maxLabelValues int
	maxEventTypes  int
}

// Cluster states of indexima_cluster_state, and the event that enters each.
const (
	stateStarting     = "starting"
	stateReady        = "ready"
	stateInitializing = "initializing"
	stateStopped      = "stopped"
	stateUnknown      = "unknown"
)

var clusterStates = []string{stateStarting, stateReady, stateInitializing, stateStopped, stateUnknown}

var stateOfEvent = map[string]string{
	"CLUSTER_START":    stateStarting,
	"PRELOAD_FINISHED": stateReady,
	"CLUSTER_INIT":     stateInitializing,
	"CLUSTER_STOP":     stateStopped,
}

// applyGauges updates what a completed event tells about the node's present
// state. It is idempotent and decided by event date (the latest wins), so an
// event read twice, or read out of order, changes nothing. count says whether
// the event is being counted now (only then is a dropped label counted).
func (st *nodeState) applyGauges(e apiclient.Event, lim limits, count bool) {
	label := st.typeLabel(e.Type, lim.maxEventTypes)
	if st.LastDate == nil {
		st.LastDate = map[string]int64{}
	}
	if d, ok := st.LastDate[label]; !ok || e.Date > d {
		st.LastDate[label] = e.Date
	}
	if s, ok := stateOfEvent[e.Type]; ok && e.Date >= st.Phase.Date {
		st.Phase = datedValue{Value: s, Date: e.Date}
	}
	switch e.Type {
	case "CLUSTER_START", "CLUSTER_STOP":
		// A (re)start or a stop unloads every table.
		if e.Date > st.TablesClearedAt {
			st.TablesClearedAt = e.Date
			for t, d := range st.Tables {
				if d < e.Date {
					delete(st.Tables, t)
				}
			}
		}
	case "TABLE_LOADED":
		name := sanitizeLabel(e.Comment)
		if name == "" || e.Date < st.TablesClearedAt {
			return
		}
		d, ok := st.Tables[name]
		if !st.admitLabel(labelTable, ok, len(st.Tables), lim.maxLabelValues, count) {
			return
		}
		if st.Tables == nil {
			st.Tables = map[string]int64{}
		}
		if !ok || e.Date > d {
			st.Tables[name] = e.Date
		}
	case "HYPER_INDEX_LOADED", "HYPER_INDEX_UNLOADED":
		name := sanitizeLabel(e.Comment)
		if name == "" {
			return
		}
		cur, ok := st.Indexes[name]
		if ok && cur.Date > e.Date {
			return
		}
		if !st.admitLabel(labelIndex, ok, len(st.Indexes), lim.maxLabelValues, count) {
			return
		}
		if st.Indexes == nil {
			st.Indexes = map[string]indexState{}
		}
		st.Indexes[name] = indexState{Loaded: e.Type == "HYPER_INDEX_LOADED", Date: e.Date}
	case "PRELOAD_FINISHED":
		if n, ok := parseCount(e.Comment); ok && (!st.Preload.Known || e.Date >= st.Preload.Date) {
			st.Preload = datedNumber{Value: n, Date: e.Date, Known: true}
		}
	}
}

// countEvent adds a completed event to the counters. Called exactly once per
// event completed after first contact.
func (st *nodeState) countEvent(e apiclient.Event, lim limits) {
	label := st.typeLabel(e.Type, lim.maxEventTypes)
	if st.Events == nil {
		st.Events = map[string]uint64{}
	}
	st.Events[label]++
	if e.HasDuration && e.Duration >= 0 {
		if st.Durations == nil {
			st.Durations = map[string]*durationHist{}
		}
		h := st.Durations[label]
		if h == nil {
			h = &durationHist{}
			st.Durations[label] = h
		}
		h.observe(float64(e.Duration) / 1000)
	}
	switch e.Type {
	case "NODE_DOWN":
		name := sanitizeLabel(e.Comment)
		if name == "" {
			name = "unknown"
		}
		_, ok := st.NodeDown[name]
		if st.admitLabel(labelDownNode, ok, len(st.NodeDown), lim.maxLabelValues, true) {
			if st.NodeDown == nil {
				st.NodeDown = map[string]uint64{}
			}
			st.NodeDown[name]++
		}
	case "SAVE_METADATA":
		if n, ok := parseCount(e.Comment); ok {
			st.MetadataUpgraded += uint64(n)
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
