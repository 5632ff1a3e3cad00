package integration

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// expectation is what the exporter must show for one node, derived from
// the simulator's ground truth with the rules of docs/counting.md: events
// completed after first contact are counted once; gauges follow the latest
// completed event of the day by date.
type expectation struct {
	events   map[string]float64 // indexima_events_total by event
	durSum   map[string]float64 // indexima_event_duration_seconds_sum by event
	nodeDown map[string]float64 // indexima_node_down_reports_total by down_node
	metadata float64            // indexima_metadata_tables_upgraded_total
	lastDate map[string]float64 // indexima_event_last_timestamp_seconds by event
	running  map[string]float64 // indexima_events_running by event
	state    string             // the indexima_cluster_state at 1
	indexes  map[string]float64 // indexima_hyperindex_loaded by index
	tables   map[string]bool    // indexima_table_loaded at 1
	preload  float64            // indexima_preload_indexes_loaded, -1 if none
}

var stateOf = map[string]string{
	simulator.ClusterStart:    "starting",
	simulator.PreloadFinished: "ready",
	simulator.ClusterInit:     "initializing",
	simulator.ClusterStop:     "stopped",
}

// expect derives the expectation from truth: dayStart is the start of the
// day of first contact (the first listing is the day's), first the
// console's time at first contact (its events are the baseline), now the
// node's time at the latest successful poll (all Unix ms).
func expect(truth []simulator.Event, dayStart, first, now int64) expectation {
	x := expectation{events: map[string]float64{}, durSum: map[string]float64{}, nodeDown: map[string]float64{},
		lastDate: map[string]float64{}, running: map[string]float64{}, indexes: map[string]float64{},
		tables: map[string]bool{}, preload: -1, state: "unknown"}
	for _, t := range simulator.EventTypes {
		x.events[t] = 0
	}
	var stateDate, clearedAt, preloadDate int64 = -1, -1, -1
	indexDate := map[string]int64{}
	// Gauges are decided by date; walk completed events in date order.
	done := make([]simulator.Event, 0, len(truth))
	for _, e := range truth {
		if e.Date <= now && now < e.CompletedAt {
			x.running[e.Type]++
		}
		if e.CompletedAt > now || e.Date < dayStart {
			continue
		}
		done = append(done, e)
		if e.CompletedAt > first {
			x.events[e.Type]++
			x.durSum[e.Type] += float64(e.Duration) / 1000
			switch e.Type {
			case simulator.NodeDown:
				x.nodeDown[e.Comment]++
			case simulator.SaveMetadata:
				if n, err := strconv.Atoi(strings.TrimSpace(e.Comment)); err == nil {
					x.metadata += float64(n)
				}
			}
		}
	}
	sort.SliceStable(done, func(i, j int) bool { return done[i].Date < done[j].Date })
	for _, e := range done {
		x.lastDate[e.Type] = float64(e.Date) / 1000
		if s, ok := stateOf[e.Type]; ok && e.Date >= stateDate {
			x.state, stateDate = s, e.Date
		}
		switch e.Type {
		case simulator.ClusterStart, simulator.ClusterStop:
			clearedAt = max(clearedAt, e.Date)
		case simulator.HyperIndexLoaded, simulator.HyperIndexUnloaded:
			if d, ok := indexDate[e.Comment]; !ok || e.Date >= d {
				indexDate[e.Comment] = e.Date
				x.indexes[e.Comment] = b2f(e.Type == simulator.HyperIndexLoaded)
			}
		case simulator.PreloadFinished:
			if n, err := strconv.Atoi(e.Comment); err == nil && e.Date >= preloadDate {
				x.preload, preloadDate = float64(n), e.Date
			}
		}
	}
	for _, e := range done {
		if e.Type == simulator.TableLoaded && e.Date >= clearedAt {
			x.tables[e.Comment] = true
		}
	}
	return x
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// check compares a scrape with the expectation of node and returns every
// difference, one line each.
func check(s *scrape, node string, x expectation) []string {
	var diffs []string
	differ := func(format string, args ...any) { diffs = append(diffs, node+": "+fmt.Sprintf(format, args...)) }

	compare := func(metric, label string, want map[string]float64, zeroIsAbsent bool) {
		got := s.byLabel(metric, node, label)
		for k, w := range want {
			g, ok := got[k]
			if !ok && zeroIsAbsent && w == 0 {
				continue
			}
			if !ok || math.Abs(g-w) > 1e-6 {
				differ("%s{%s=%q} = %v (present %v), truth says %v", metric, label, k, g, ok, w)
			}
		}
		for k, g := range got {
			if _, ok := want[k]; !ok && g != 0 {
				differ("%s{%s=%q} = %v, truth has none", metric, label, k, g)
			}
		}
	}
	compare("indexima_events_total", "event", x.events, false)
	compare("indexima_event_duration_seconds", "event", nonZero(x.events), true) // sample counts
	compare("indexima_node_down_reports_total", "down_node", x.nodeDown, true)
	compare("indexima_event_last_timestamp_seconds", "event", x.lastDate, false)
	compare("indexima_events_running", "event", x.running, true)
	compare("indexima_hyperindex_loaded", "index", x.indexes, false)
	tables := map[string]float64{}
	for t := range x.tables {
		tables[t] = 1
	}
	compare("indexima_table_loaded", "table", tables, false)

	for ev, want := range x.durSum {
		if m, ok := s.find("indexima_event_duration_seconds", map[string]string{"node": node, "event": ev}); ok {
			if got := m.GetHistogram().GetSampleSum(); math.Abs(got-want) > 1e-6 {
				differ("indexima_event_duration_seconds_sum{event=%q} = %v, truth says %v", ev, got, want)
			}
		} else if x.events[ev] > 0 {
			differ("indexima_event_duration_seconds{event=%q} missing", ev)
		}
	}
	states := s.byLabel("indexima_cluster_state", node, "state")
	for st, v := range states {
		if v != b2f(st == x.state) {
			differ("indexima_cluster_state{state=%q} = %v, truth says the state is %s", st, v, x.state)
		}
	}
	if states[x.state] != 1 {
		differ("indexima_cluster_state{state=%q} is not 1 (states %v)", x.state, states)
	}
	if got, ok := s.value("indexima_metadata_tables_upgraded_total", map[string]string{"node": node}); x.metadata > 0 && (!ok || got != x.metadata) {
		differ("indexima_metadata_tables_upgraded_total = %v (present %v), truth says %v", got, ok, x.metadata)
	}
	if x.preload >= 0 {
		if got, ok := s.value("indexima_preload_indexes_loaded", map[string]string{"node": node}); !ok || got != x.preload {
			differ("indexima_preload_indexes_loaded = %v (present %v), truth says %v", got, ok, x.preload)
		}
	}
	return diffs
}

func nonZero(m map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}
