package collector

import (
	"fmt"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// First contact learns the node's present state from its past, at any hour:
// a cluster started yesterday evening and quiet since midnight, one quiet
// since the morning, one started three days ago. Nothing of that past is
// counted, and the look-back costs a few calls once per node.
func TestFirstContactKnowsTheStateAtAnyHour(t *testing.T) {
	for _, tc := range []struct {
		name     string
		at       time.Time
		ago      time.Duration
		maxCalls int // lastevents + event/desc pages of the first contact
	}{
		{"just after midnight, started yesterday evening", time.Date(2026, 11, 23, 0, 0, 35, 0, time.UTC), 3*time.Hour + 35*time.Second, 4},
		{"at noon, nothing today", time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC), 15 * time.Hour, 4},
		{"started three days back", time.Date(2026, 11, 23, 9, 30, 0, 0, time.UTC), 72 * time.Hour, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnvAt(t, tc.at, simulator.Config{StartedAgo: tc.ago}, 2, testOptions{})
			// After the start: one hyperindex unloaded (memory low), still
			// before first contact.
			for _, n := range e.nodes {
				idx := e.sim.Indexes(n)
				e.sim.Append(n, simulator.Event{Type: simulator.MemoryLow, Date: tc.at.Add(-tc.ago + 30*time.Minute).UnixMilli(), Duration: 3},
					simulator.Event{Type: simulator.HyperIndexUnloaded, Date: tc.at.Add(-tc.ago+30*time.Minute).UnixMilli() + 1, Duration: 20, Comment: idx[0]})
			}
			e.sim.ResetStats()
			m := e.scrape(nil)
			st := e.sim.Stats()
			for _, n := range e.nodes {
				if got := clusterState(t, m, n); got != "ready" {
					t.Errorf("node %s: cluster_state %q at first contact, want ready", n, got)
				}
				idx := e.sim.Indexes(n)
				for i, name := range idx {
					want := 1.0
					if i == 0 {
						want = 0 // unloaded after the start
					}
					if got := m.value(t, "indexima_hyperindex_loaded", l("node", n, "index", name)); got != want {
						t.Errorf("node %s: hyperindex %s = %v, want %v", n, name, got, want)
					}
				}
				for _, name := range e.sim.Tables(n) {
					if got := m.value(t, "indexima_table_loaded", l("node", n, "table", name)); got != 1 {
						t.Errorf("node %s: table %s = %v, want 1", n, name, got)
					}
				}
				if got := m.value(t, "indexima_preload_indexes_loaded", l("node", n)); got != float64(len(idx)) {
					t.Errorf("node %s: preload %v, want %d", n, got, len(idx))
				}
				for _, typ := range []string{"CLUSTER_START", "TABLE_LOADED", "HYPER_INDEX_LOADED", "HYPER_INDEX_UNLOADED", "PRELOAD_FINISHED", "MEMORY_LOW"} {
					var latest int64
					for _, ev := range e.sim.Truth(n) {
						if ev.Type == typ {
							latest = max(latest, ev.Date)
						}
					}
					got := m.value(t, "indexima_event_last_timestamp_seconds", l("node", n, "event", typ))
					if int64(got*1000+0.5) != latest {
						t.Errorf("node %s: last %s at %v, want %v", n, typ, got, float64(latest)/1000)
					}
				}
			}
			e.checkTruth(m, nil) // nothing counted: all of it before first contact
			calls := st.Requests["lastevents"] + st.Requests["event_desc"]
			if st.Requests["lastevents"] != len(e.nodes) || calls > tc.maxCalls*len(e.nodes) || st.Requests["events"]+st.Requests["events_date"] != 0 {
				t.Errorf("first contact of %d nodes made %v; want one lastevents and at most %d calls per node, no day listing", len(e.nodes), st.Requests, tc.maxCalls)
			}
			// Later events move the state on and are counted.
			e.clock.Advance(time.Minute)
			e.sim.StopCluster()
			e.clock.Advance(time.Minute)
			m = e.scrape(nil)
			for _, n := range e.nodes {
				if got := clusterState(t, m, n); got != "stopped" {
					t.Errorf("node %s: cluster_state %q after a stop, want stopped", n, got)
				}
			}
			e.checkTruth(m, nil)
		})
	}
}

// A start beyond the look-back bound: the state is unknown, as documented,
// the look-back stays within its bound of calls, and counting works.
func TestFirstContactBeyondTheLookBack(t *testing.T) {
	at := time.Date(2026, 11, 23, 9, 30, 0, 0, time.UTC)
	e := newEnvAt(t, at, simulator.Config{StartedAgo: 8 * 24 * time.Hour}, 1, testOptions{LookBack: 7 * 24 * time.Hour})
	n := e.nodes[0]
	e.sim.ResetStats()
	m := e.scrape(nil)
	if got := clusterState(t, m, n); got != "unknown" {
		t.Errorf("cluster_state %q with the start beyond the look-back, want unknown", got)
	}
	if s := m.series("indexima_hyperindex_loaded", l("node", n)); len(s) != 0 {
		t.Errorf("hyperindexes shown from beyond the look-back: %v", s)
	}
	if st := e.sim.Stats(); st.Requests["lastevents"]+st.Requests["event_desc"] > 3 {
		t.Errorf("first contact made %v", st.Requests)
	}
	e.clock.Advance(time.Minute)
	e.sim.ReportNodeDown(n, "3")
	e.clock.Advance(time.Second)
	m = e.scrape(nil)
	e.checkTruth(m, nil)
	if got := m.value(t, "indexima_node_down_reports_total", l("node", n, "down_node", "3")); got != 1 {
		t.Errorf("node_down{3} = %v after a report, want 1", got)
	}
}

// A busy node: the look-back is bounded by its calls, and what it could not
// read is not taken as the baseline (nothing of it is counted later either).
func TestFirstContactLookBackCallBound(t *testing.T) {
	at := time.Date(2026, 11, 23, 9, 30, 0, 0, time.UTC)
	e := newEnvAt(t, at, simulator.Config{}, 1, testOptions{LookBackCalls: 3})
	n := e.nodes[0]
	var evs []simulator.Event
	for i := 0; i < 12000; i++ { // more than two pages of 5000
		evs = append(evs, simulator.Event{Type: simulator.SaveMetadata, Date: at.UnixMilli() - 1 - int64(i)*100, Duration: 5, Comment: fmt.Sprint(i % 5)})
	}
	e.sim.Append(n, evs...)
	e.sim.ResetStats()
	m := e.scrape(nil)
	if st := e.sim.Stats(); st.Requests["lastevents"]+st.Requests["event_desc"] != 3 {
		t.Errorf("first contact made %v, want 3 calls (the bound)", st.Requests)
	}
	for i := 0; i < 3; i++ {
		e.clock.Advance(2 * time.Second)
		m = e.scrape(nil)
	}
	e.checkTruth(m, nil)
}
