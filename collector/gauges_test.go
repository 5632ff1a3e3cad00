package collector

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/poller"
	"github.com/indexima-exporter/indexima_exporter/tally"
)

// clusterState returns the state whose indexima_cluster_state series is 1,
// failing unless the state set is whole with exactly one state at 1.
func clusterState(t *testing.T, m metrics, node string) string {
	t.Helper()
	s := m.series("indexima_cluster_state", l("node", node))
	if len(s) != len(clusterStates) {
		t.Fatalf("cluster_state has %d series, want %d", len(s), len(clusterStates))
	}
	on := ""
	for _, x := range s {
		if x.value == 1 {
			if on != "" {
				t.Fatalf("two states at 1: %s and %s", on, x.labels["state"])
			}
			on = x.labels["state"]
		}
	}
	return on
}

func labelSet(m metrics, name, node, label string, value float64) []string {
	var out []string
	for _, s := range m.series(name, l("node", node)) {
		if s.value == value {
			out = append(out, s.labels[label])
		}
	}
	return sortStrings(out)
}

func sortStrings(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

// Cluster state, hyperindexes, tables and preload follow the scenario: a
// memory-low episode, a stop, a start with loads running for seconds.
func TestStateGaugesFollowTheCluster(t *testing.T) {
	e := newEnv(t, simulator.Config{Seed: 2}, 1, testOptions{})
	n := e.nodes[0]
	tables, indexes := sortStrings(e.sim.Tables(n)), sortStrings(e.sim.Indexes(n))

	m := e.scrape(nil)
	if got := clusterState(t, m, n); got != tally.StateReady {
		t.Errorf("state after the day's history = %s, want ready", got)
	}
	if got := labelSet(m, "indexima_table_loaded", n, "table", 1); strings.Join(got, ",") != strings.Join(tables, ",") {
		t.Errorf("tables loaded %v, want %v", got, tables)
	}
	if got := labelSet(m, "indexima_hyperindex_loaded", n, "index", 1); strings.Join(got, ",") != strings.Join(indexes, ",") {
		t.Errorf("indexes loaded %v, want %v", got, indexes)
	}
	if got := m.value(t, "indexima_preload_indexes_loaded", l("node", n)); got != float64(len(indexes)) {
		t.Errorf("preload = %v, want %d", got, len(indexes))
	}
	if len(m.series("indexima_event_last_timestamp_seconds", l("node", n, "event", "PRELOAD_FINISHED"))) != 1 {
		t.Errorf("last timestamp of PRELOAD_FINISHED not known from the day's listing")
	}

	e.clock.Advance(time.Second)
	e.sim.MemoryLowEpisode(n, indexes[0], indexes[1])
	e.clock.Advance(time.Second)
	m = e.scrape(nil)
	if got := labelSet(m, "indexima_hyperindex_loaded", n, "index", 0); strings.Join(got, ",") != indexes[0]+","+indexes[1] {
		t.Errorf("unloaded indexes %v, want %v", got, indexes[:2])
	}
	e.checkTruth(m, nil)

	e.sim.StopCluster()
	e.clock.Advance(time.Second)
	m = e.scrape(nil)
	if got := clusterState(t, m, n); got != tally.StateStopped {
		t.Errorf("state after stop = %s", got)
	}
	if got := m.series("indexima_table_loaded", l("node", n)); len(got) != 0 {
		t.Errorf("tables still loaded after stop: %d", len(got))
	}

	e.sim.StartCluster()
	e.clock.Advance(100 * time.Millisecond)
	m = e.scrape(nil)
	if got := clusterState(t, m, n); got != tally.StateStarting {
		t.Errorf("state during start = %s", got)
	}
	running := 0.0
	for _, s := range m.series("indexima_events_running", l("node", n)) {
		running += s.value
	}
	if running == 0 {
		t.Errorf("no running event seen during the start")
	}
	for i := 0; i < 12; i++ {
		e.clock.Advance(5 * time.Second)
		m = e.scrape(nil)
	}
	if got := clusterState(t, m, n); got != tally.StateReady {
		t.Errorf("state after start = %s", got)
	}
	if got := labelSet(m, "indexima_table_loaded", n, "table", 1); strings.Join(got, ",") != strings.Join(tables, ",") {
		t.Errorf("tables loaded after start %v, want %v", got, tables)
	}
	if got := labelSet(m, "indexima_hyperindex_loaded", n, "index", 1); strings.Join(got, ",") != strings.Join(indexes, ",") {
		t.Errorf("indexes loaded after start %v, want %v", got, indexes)
	}
	e.checkTruth(m, nil)
}

// Unknown types get their own label up to MaxEventTypes names; beyond, and
// names that do not look like a type, go to OTHER.
func TestUnknownEventTypes(t *testing.T) {
	e := newEnv(t, simulator.Config{}, 1, testOptions{MaxEventTypes: 2})
	n := e.nodes[0]
	e.scrape(nil)
	at := e.nowMS()
	types := []string{"NEW_ONE", "NEW_ONE", "NEW_TWO", "NEW_THREE", "not a type", "lower_case", strings.Repeat("A", 70)}
	for i, typ := range types {
		e.sim.Append(n, simulator.Event{Type: typ, Date: at + int64(i), Duration: 1})
	}
	e.clock.Advance(time.Second)
	m := e.scrape(nil)
	// Admission follows date order: the first two well-formed names win.
	admitted := map[string]bool{"NEW_ONE": true, "NEW_TWO": true}
	e.checkTruth(m, func(typ string) string {
		if slices.Contains(knownTypes, typ) || admitted[typ] {
			return typ
		}
		return otherType
	})
	if got := m.value(t, "indexima_events_total", l("node", n, "event", "OTHER")); got != 4 {
		t.Errorf("OTHER = %v, want 4", got)
	}
}

// Label values from comments: bounded per node (the rest dropped and
// counted), valid UTF-8, at most 128 bytes.
func TestLabelValueBounds(t *testing.T) {
	e := newEnv(t, simulator.Config{}, 1, testOptions{MaxLabelValues: 3})
	n := e.nodes[0]
	m := e.scrape(nil)
	if got := len(m.series("indexima_table_loaded", l("node", n))); got != 3 {
		t.Errorf("%d tables exported, want the bound 3", got)
	}
	at := e.nowMS()
	for i, c := range []string{"7", "8", "9", "10", "7"} {
		e.sim.Append(n, simulator.Event{Type: simulator.NodeDown, Date: at + int64(i), Duration: 1, Comment: c})
	}
	e.sim.Append(n, simulator.Event{Type: simulator.TableLoaded, Date: at + 10, Duration: 1, Comment: "new.table"})
	e.clock.Advance(time.Second)
	m = e.scrape(nil)
	e.checkTruth(m, nil)
	if got := labelSet(m, "indexima_node_down_reports_total", n, "down_node", 1); strings.Join(got, ",") != "8,9" {
		t.Errorf("down nodes with one report: %v", got)
	}
	if got := m.value(t, "indexima_node_down_reports_total", l("node", n, "down_node", "7")); got != 2 {
		t.Errorf("down_node 7: %v", got)
	}
	if got := m.value(t, "indexima_exporter_label_values_dropped_total", l("node", n, "label", "down_node")); got != 1 {
		t.Errorf("dropped down_node = %v, want 1", got)
	}
	if got := m.value(t, "indexima_exporter_label_values_dropped_total", l("node", n, "label", "table")); got != 1 {
		t.Errorf("dropped table = %v, want 1", got)
	}

	e2 := newEnv(t, simulator.Config{}, 1, testOptions{})
	n2 := e2.nodes[0]
	e2.scrape(nil)
	long := strings.Repeat("é", 100) // 200 bytes
	e2.sim.Append(n2, simulator.Event{Type: simulator.HyperIndexLoaded, Date: e2.nowMS(), Duration: 1, Comment: "bad\xffname"},
		simulator.Event{Type: simulator.HyperIndexLoaded, Date: e2.nowMS(), Duration: 1, Comment: long})
	e2.clock.Advance(time.Second)
	m = e2.scrape(nil)
	if len(m.series("indexima_hyperindex_loaded", l("node", n2, "index", "bad\uFFFDname"))) != 1 {
		t.Errorf("invalid UTF-8 not replaced")
	}
	if len(m.series("indexima_hyperindex_loaded", l("node", n2, "index", strings.Repeat("é", 64)))) != 1 {
		t.Errorf("long value not cut to 128 bytes on a rune boundary")
	}
}

// A node removed by a reload vanishes from the output; nodes that stay keep
// their state; several clusters carry the cluster label.
func TestReconfiguration(t *testing.T) {
	e := newEnv(t, simulator.Config{Seed: 4, Rate: 2}, 3, testOptions{})
	e.scrape(nil)
	e.clock.Advance(10 * time.Second)
	m := e.scrape(nil)
	e.checkTruth(m, nil)
	gone := e.nodes[2]
	e.p.SetClusters([]poller.Cluster{e.cluster("", e.nodes[:2]...)})
	e.clock.Advance(10 * time.Second)
	m = e.scrape(nil)
	for _, mf := range m {
		for _, mt := range mf.GetMetric() {
			for _, lp := range mt.GetLabel() {
				if lp.GetName() == "node" && lp.GetValue() == gone {
					t.Fatalf("removed node still in %s", mf.GetName())
				}
			}
		}
	}
	e.nodes = e.nodes[:2]
	e.checkTruth(m, nil) // kept nodes kept their baseline and counts

	e.p.SetClusters([]poller.Cluster{e.cluster("east", e.nodes[0]), e.cluster("west", e.nodes[1])})
	m = e.scrape(nil)
	for i, c := range []string{"east", "west"} {
		if got := m.value(t, "indexima_up", l("cluster", c, "node", e.nodes[i])); got != 1 {
			t.Errorf("up{cluster=%s} = %v", c, got)
		}
		if got := m.value(t, "indexima_console_up", l("cluster", c)); got != 1 {
			t.Errorf("console_up{cluster=%s} = %v", c, got)
		}
	}
	for _, s := range m.series("indexima_events_total", nil) {
		if s.labels["cluster"] == "" {
			t.Fatalf("series without cluster label: %v", s.labels)
		}
	}
}

// The version and columns sub-collectors; the collector switches.
func TestVersionAndColumns(t *testing.T) {
	e := newEnv(t, simulator.Config{Nodes: []simulator.NodeConfig{{Host: "n1.test", Version: "2025.2.1"}}}, 0,
		testOptions{Enabled: map[string]bool{"columns": true}})
	n := e.nodes[0]
	m := e.scrape(nil)
	if got := m.value(t, "indexima_node_info", l("node", n, "version", "2025.2.1")); got != 1 {
		t.Errorf("node_info = %v", got)
	}
	cols := m.series("indexima_table_columns", l("node", n))
	if len(cols) != len(e.sim.Tables(n)) {
		t.Errorf("%d table_columns series, want one per loaded table (%d)", len(cols), len(e.sim.Tables(n)))
	}
	for _, name := range []string{"events", "version", "hyperindexes", "tables", "columns"} {
		if got := m.value(t, "indexima_exporter_collector_success", l("collector", name)); got != 1 {
			t.Errorf("collector %s success = %v", name, got)
		}
	}
	e.sim.ResetStats()
	e.clock.Advance(time.Second)
	e.scrape(nil)
	if st := e.sim.Stats(); st.Requests["version"] != 0 || st.Requests["columns"] != 0 {
		t.Errorf("info called again before InfoRefresh: %v", st.Requests)
	}

	off := newEnv(t, simulator.Config{}, 1, testOptions{Enabled: map[string]bool{"version": false}})
	m = off.scrape(nil)
	if len(m.series("indexima_node_info", nil)) != 0 || len(m.series("indexima_table_columns", nil)) != 0 {
		t.Errorf("disabled collectors still export")
	}
	// Switched off, they cost no call either: past first contact (whose
	// clock reading may ask get/version for a Date), scrapes make no
	// version or columns call, where the same scrapes with them on make
	// both at every one (InfoRefresh of 1 ns; it runs on local time).
	for _, on := range []bool{false, true} {
		e := newEnv(t, simulator.Config{}, 1, testOptions{Enabled: map[string]bool{"version": on, "columns": on}, InfoRefresh: time.Nanosecond})
		e.scrape(nil)
		e.sim.ResetStats()
		for i := 0; i < 5; i++ {
			e.clock.Advance(time.Minute)
			e.scrape(nil)
		}
		st := e.sim.Stats()
		v, c := st.Requests["version"], st.Requests["columns"]
		if on && (v == 0 || c == 0) || !on && (v != 0 || c != 0) {
			t.Errorf("version and columns on=%v: console calls %v", on, st.Requests)
		}
	}
	if _, err := New(poller.New(poller.Options{}), Options{Enabled: map[string]bool{"nope": true}}); err == nil {
		t.Errorf("unknown collector name accepted")
	}
}
