package collector

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
	"github.com/indexima-exporter/indexima_exporter/poller"
	"github.com/indexima-exporter/indexima_exporter/store"
)

// The rendered exposition passes promtool's lint: names, units, help texts,
// _total on counters only.
func TestExpositionPassesPromtool(t *testing.T) {
	promtool := testkit.Tool(t, "promtool", "Debian package prometheus")
	e := newEnv(t, simulator.Config{Seed: 1, Rate: 3}, 2, testOptions{Enabled: map[string]bool{"columns": true}})
	e.observer = NewAPIObserver(e.reg)
	e.p.SetClusters([]poller.Cluster{e.cluster("", e.nodes...)})
	e.scrape(nil)
	e.clock.Advance(30 * time.Second)
	e.sim.ReportNodeDown(e.nodes[0], e.nodes[1])
	e.clock.Advance(time.Second)
	mfs := e.scrape(nil)
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"indexima_up", "indexima_events_total", "indexima_event_duration_seconds",
		"indexima_cluster_state", "indexima_node_down_reports_total", "indexima_exporter_api_requests_total",
		"indexima_exporter_node_poll_duration_seconds", "indexima_table_columns"} {
		if !strings.Contains(buf.String(), "# TYPE "+name+" ") {
			t.Errorf("exposition lacks %s", name)
		}
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = &buf
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

// --collector.NAME / --no-collector.NAME switch sub-collectors, with each
// one's default.
func TestRegisterFlags(t *testing.T) {
	app := kingpin.New("test", "")
	get := RegisterFlags(app)
	if _, err := app.Parse([]string{"--no-collector.version", "--collector.columns"}); err != nil {
		t.Fatal(err)
	}
	got := get()
	want := map[string]bool{"events": true, "version": false, "hyperindexes": true, "tables": true, "columns": true}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("collector %s = %v, want %v", k, got[k], v)
		}
	}
	app2 := kingpin.New("test", "")
	get2 := RegisterFlags(app2)
	if _, err := app2.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if get2()["columns"] || !get2()["events"] {
		t.Errorf("defaults wrong: %v", get2())
	}
}

// The exporter's own API metrics are fed through the observer.
func TestAPIObserver(t *testing.T) {
	reg := prometheus.NewRegistry()
	o := NewAPIObserver(reg)
	o.ObserveLogin("success")
	o.ObserveRequest("lastevents", "200", 20*time.Millisecond)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	m := metrics(mfs)
	if got := m.value(t, "indexima_exporter_api_requests_total", l("endpoint", "lastevents", "code", "200")); got != 1 {
		t.Errorf("requests = %v", got)
	}
	if got := m.value(t, "indexima_exporter_api_request_duration_seconds", l("endpoint", "lastevents")); got != 1 {
		t.Errorf("duration observations = %v", got)
	}
	if got := m.value(t, "indexima_exporter_logins_total", l("result", "success")); got != 1 {
		t.Errorf("logins = %v", got)
	}
	if got := m.value(t, "indexima_exporter_logins_total", l("result", "failure")); got != 0 {
		t.Errorf("failed logins = %v", got)
	}
}

// A single node can be collected alone (for /probe), sharing the polls.
func TestNodeCollector(t *testing.T) {
	e := newEnv(t, simulator.Config{Seed: 6, Rate: 2}, 2, testOptions{})
	e.scrape(nil)
	c, ok := e.exp.NodeCollector(context.Background(), "", e.nodes[1])
	if !ok {
		t.Fatal("node not found")
	}
	if _, ok := e.exp.NodeCollector(context.Background(), "", "nope:1"); ok {
		t.Error("unknown node found")
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	e.clock.Advance(5 * time.Second)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	m := metrics(mfs)
	if len(m.series("indexima_up", l("node", e.nodes[0]))) != 0 || m.value(t, "indexima_up", l("node", e.nodes[1])) != 1 {
		t.Errorf("probe output is not that one node")
	}
	m = e.scrape(nil)
	e.checkTruth(m, nil)
}

// Node state survives a round trip through the state store: a new exporter restored from it
// goes on counting without a new baseline, without replay and without a
// look-back (the state gauges are in the state), and its counters keep the
// created timestamp of the first contact.
func TestSnapshotRestore(t *testing.T) {
	e := newEnv(t, simulator.Config{Seed: 8, Rate: 3}, 2, testOptions{})
	before := time.Now()
	first := e.scrape(nil)
	created := createdOf(t, first, e.nodes[0])
	if created.Before(before.Truncate(time.Millisecond)) || created.After(time.Now()) {
		t.Errorf("counters created at %v, want the first contact's time (%v to now)", created, before)
	}
	e.sim.Append(e.nodes[0], simulator.Event{Type: simulator.TableLoaded, Duration: 120_000, Comment: "slow.t"})
	e.clock.Advance(20 * time.Second)
	saved := e.scrape(nil)
	path := filepath.Join(t.TempDir(), "state.json")
	st, _, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var nodes []store.Node
	for _, n := range e.p.NodeStates() {
		nodes = append(nodes, store.Node{Key: n.Key, State: n.State})
	}
	if _, err := st.SaveAll(nodes); err != nil {
		t.Fatal(err)
	}
	st.Close() // the first exporter ends: its lock released
	st2, opened, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	p2, exp2 := newExporter(t, testOptions{})
	p2.SetClusters([]poller.Cluster{e.cluster("", e.nodes...)})
	if got := p2.Restore(opened.States); got != 2 {
		t.Fatalf("restored %d nodes, want 2", got)
	}
	e.p, e.exp = p2, exp2
	e.reg = prometheus.NewRegistry()
	e.reg.MustRegister(exp2)
	e.sim.ResetStats()
	m := e.scrape(nil)
	for _, n := range e.nodes {
		if a, b := clusterState(t, saved, n), clusterState(t, m, n); a != b {
			t.Errorf("node %s: cluster state %q before the restore, %q after", n, a, b)
		}
		if a, b := len(saved.series("indexima_hyperindex_loaded", l("node", n))), len(m.series("indexima_hyperindex_loaded", l("node", n))); a != b || a == 0 {
			t.Errorf("node %s: %d hyperindexes before the restore, %d after", n, a, b)
		}
	}
	for i := 0; i < 10; i++ {
		e.clock.Advance(15 * time.Second)
		m = e.scrape(nil)
	}
	e.checkTruth(m, nil)
	if st := e.sim.Stats(); st.Requests["event_desc"] != 0 {
		t.Errorf("a restored node looked back: %v", st.Requests)
	}
	if got := createdOf(t, m, e.nodes[0]); !got.Equal(created) {
		t.Errorf("created timestamp %v after the restore, want %v", got, created)
	}
	if got := m.value(t, "indexima_events_total", l("node", e.nodes[0], "event", "TABLE_LOADED")); got < 1 {
		t.Errorf("pending running event lost across restore")
	}
}

// createdOf returns the created timestamp of a node's counters, failing
// unless every counter and histogram of the node carries the same one.
func createdOf(t *testing.T, m metrics, node string) time.Time {
	t.Helper()
	var created time.Time
	for _, mf := range m {
		for _, mt := range mf.GetMetric() {
			if !hasNode(mt, node) {
				continue
			}
			var ts *timestamppb.Timestamp
			switch {
			case mt.Counter != nil:
				ts = mt.Counter.GetCreatedTimestamp()
			case mt.Histogram != nil:
				ts = mt.Histogram.GetCreatedTimestamp()
			default:
				continue
			}
			if ts == nil {
				t.Fatalf("%s of node %s has no created timestamp", mf.GetName(), node)
			}
			if created.IsZero() {
				created = ts.AsTime()
			} else if !ts.AsTime().Equal(created) {
				t.Fatalf("%s of node %s created at %v, others at %v", mf.GetName(), node, ts.AsTime(), created)
			}
		}
	}
	if created.IsZero() {
		t.Fatalf("node %s has no counter", node)
	}
	return created
}

func hasNode(mt *dto.Metric, node string) bool {
	for _, lp := range mt.GetLabel() {
		if lp.GetName() == "node" && lp.GetValue() == node {
			return true
		}
	}
	return false
}
