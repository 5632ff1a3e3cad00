package program

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// probeCluster is one simulated console of the two-cluster configuration.
type probeCluster struct {
	module string
	sim    *simulator.Simulator
	clock  *simulator.ManualClock
	nodes  map[string]string // node name -> simulator key
}

func newProbeCluster(t *testing.T, module string, hosts ...string) *probeCluster {
	t.Helper()
	c := &probeCluster{module: module, clock: simulator.NewManualClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)),
		nodes: map[string]string{}}
	var ncs []simulator.NodeConfig
	for _, h := range hosts {
		ncs = append(ncs, simulator.NodeConfig{Host: h, Port: 9999})
	}
	c.sim = simulator.New(simulator.Config{Users: map[string]string{"monitor": module + "-secret"}, Nodes: ncs, Clock: c.clock})
	if err := c.sim.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.sim.Close() })
	for i, nc := range ncs {
		c.nodes[fmt.Sprintf("core-%d", i+1)] = nc.Key()
	}
	return c
}

func (c *probeCluster) yaml(dir string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %s:\n    console: {url: %q, username: monitor, password: %q}\n    nodes:\n", c.module, c.sim.URL(), c.module+"-secret")
	for i := 1; i <= len(c.nodes); i++ {
		name := fmt.Sprintf("core-%d", i)
		host, port, _ := strings.Cut(c.nodes[name], ":")
		fmt.Fprintf(&b, "      - {host: %s, port: %s, name: %s}\n", host, port, name)
	}
	return b.String()
}

// parseProbe parses an exposition and returns its families.
func parseProbe(t *testing.T, body string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parsing the exposition: %v\n%s", err, body)
	}
	return fams
}

func labelOf(m *dto.Metric, name string) (string, bool) {
	for _, l := range m.Label {
		if l.GetName() == name {
			return l.GetValue(), true
		}
	}
	return "", false
}

// eventCounts returns indexima_events_total by event for one (cluster, node).
func eventCounts(fams map[string]*dto.MetricFamily, cluster, node string) map[string]float64 {
	out := map[string]float64{}
	f := fams["indexima_events_total"]
	if f == nil {
		return out
	}
	for _, m := range f.Metric {
		c, _ := labelOf(m, "cluster")
		n, _ := labelOf(m, "node")
		ev, _ := labelOf(m, "event")
		if c == cluster && n == node {
			out[ev] += m.Counter.GetValue()
		}
	}
	return out
}

// Two clusters as modules of one exporter: /probe answers one (cluster,
// node) at a time, with its own cursor and counters, labelled with its
// cluster; /metrics labels every node series with its cluster and agrees
// with the probes; unknown modules and targets are refused with 400.
func TestProbeTwoClustersCountsEachNode(t *testing.T) {
	prod := newProbeCluster(t, "prod", "prod-a", "prod-b")
	staging := newProbeCluster(t, "staging", "stg-a")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "indexima.yml")
	if err := os.WriteFile(cfg, []byte("clusters:\n"+prod.yaml(dir)+staging.yaml(dir)), 0o600); err != nil {
		t.Fatal(err)
	}
	r := start(t, "--config.file="+cfg)
	probe := func(module, target string) map[string]*dto.MetricFamily {
		t.Helper()
		code, body := r.get("/probe?module=" + module + "&target=" + target)
		if code != http.StatusOK {
			t.Fatalf("/probe %s/%s: %d %s", module, target, code, body)
		}
		return parseProbe(t, body)
	}
	type nodeRef struct {
		c    *probeCluster
		name string
	}
	all := []nodeRef{{prod, "core-1"}, {prod, "core-2"}, {staging, "core-1"}}

	// First contact of every node: the baseline, nothing counted.
	for _, n := range all {
		fams := probe(n.c.module, n.name)
		for ev, v := range eventCounts(fams, n.c.module, n.name) {
			if v != 0 {
				t.Errorf("%s/%s: %s counted %v at first contact, want 0", n.c.module, n.name, ev, v)
			}
		}
	}

	// Different events on each node, then each node probed twice: counted
	// once, on its own node and cluster only.
	want := map[nodeRef]map[string]float64{
		all[0]: {simulator.TableLoaded: 3, simulator.NodeDown: 1},
		all[1]: {simulator.SaveMetadata: 2},
		all[2]: {simulator.HyperIndexLoaded: 4},
	}
	for _, n := range all {
		key := n.c.nodes[n.name]
		for ev, k := range want[n] {
			for i := 0; i < int(k); i++ {
				e := simulator.Event{Type: ev, Duration: 5, Comment: "2"}
				if ev == simulator.TableLoaded {
					e.Comment = fmt.Sprintf("sales.t%d", i)
				}
				if ev == simulator.HyperIndexLoaded {
					e.Comment = fmt.Sprintf("idx%d", i)
				}
				n.c.sim.Append(key, e)
			}
		}
	}
	prod.clock.Advance(time.Minute)
	staging.clock.Advance(time.Minute)
	for round := 0; round < 2; round++ {
		for _, n := range all {
			fams := probe(n.c.module, n.name)
			got := eventCounts(fams, n.c.module, n.name)
			for _, ev := range simulator.EventTypes {
				if got[ev] != want[n][ev] {
					t.Errorf("round %d, %s/%s: %s = %v, want %v", round, n.c.module, n.name, ev, got[ev], want[n][ev])
				}
			}
			// Only this node's series, and its cluster's console_up (the
			// exporter's own series, such as collector success, have
			// neither label).
			for name, f := range fams {
				if strings.HasPrefix(name, "indexima_exporter_") {
					continue
				}
				for _, m := range f.Metric {
					c, hasC := labelOf(m, "cluster")
					node, hasN := labelOf(m, "node")
					if !hasC || c != n.c.module || (hasN && node != n.name) {
						t.Errorf("/probe %s/%s holds %s{cluster=%q, node=%q}", n.c.module, n.name, name, c, node)
					}
				}
			}
			if f := fams["indexima_console_up"]; f == nil || len(f.Metric) != 1 || f.Metric[0].Gauge.GetValue() != 1 {
				t.Errorf("/probe %s/%s: indexima_console_up missing or not 1", n.c.module, n.name)
			}
		}
	}

	// /metrics: every node series carries its cluster, counts agree.
	code, body := r.get("/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	fams := parseProbe(t, body)
	for name, f := range fams {
		if !strings.HasPrefix(name, "indexima_") || strings.HasPrefix(name, "indexima_exporter_") {
			continue
		}
		for _, m := range f.Metric {
			if c, ok := labelOf(m, "cluster"); !ok || (c != "prod" && c != "staging") {
				t.Errorf("/metrics: %s without a cluster label: %v", name, m.Label)
			}
		}
	}
	for _, n := range all {
		got := eventCounts(fams, n.c.module, n.name)
		for ev, v := range want[n] {
			if got[ev] != v {
				t.Errorf("/metrics %s/%s: %s = %v, want %v", n.c.module, n.name, ev, got[ev], v)
			}
		}
	}

	// Unknown module or target, or a node of another cluster: 400, naming it.
	for _, q := range []string{"module=qa&target=core-1", "module=prod&target=core-9",
		"module=staging&target=core-2", "module=prod&target=stg-a:9999", "module=prod"} {
		code, body := r.get("/probe?" + q)
		if code != http.StatusBadRequest {
			t.Errorf("/probe?%s: %d %q, want 400", q, code, body)
		}
		if strings.Contains(q, "target=") && !strings.Contains(body, strings.SplitN(strings.SplitN(q, "target=", 2)[1], "&", 2)[0]) {
			t.Errorf("/probe?%s: the message does not name the target: %q", q, body)
		}
	}
	// A node of the other cluster by host:port works in its own module.
	probe("staging", "stg-a:9999")
}

// With --scrape.probe-only, /metrics serves the exporter's own metrics and
// calls no node (each sharded replica would otherwise poll every node at
// each scrape of it); /probe still polls the node asked for.
func TestProbeOnlyMetricsCallsNoNode(t *testing.T) {
	prod := newProbeCluster(t, "prod", "prod-a", "prod-b")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "indexima.yml")
	if err := os.WriteFile(cfg, []byte("clusters:\n"+prod.yaml(dir)), 0o600); err != nil {
		t.Fatal(err)
	}
	r := start(t, "--config.file="+cfg, "--scrape.probe-only")
	for range 2 {
		code, body := r.get("/metrics")
		if code != http.StatusOK {
			t.Fatalf("/metrics: %d %s", code, body)
		}
		fams := parseProbe(t, body)
		for _, name := range []string{"indexima_up", "indexima_events_total", "indexima_console_up"} {
			if _, ok := fams[name]; ok {
				t.Fatalf("/metrics of a probe-only exporter has %s: it polled the nodes", name)
			}
		}
		if _, ok := fams["indexima_exporter_build_info"]; !ok {
			t.Fatalf("/metrics of a probe-only exporter lacks its own metrics:\n%.500s", body)
		}
	}
	calls := func(st simulator.Stats) (n int) {
		for _, c := range st.Requests {
			n += c
		}
		return n
	}
	if st := prod.sim.Stats(); calls(st) != 0 {
		t.Fatalf("scrapes of /metrics reached the console: %+v", st)
	}

	code, body := r.get("/probe?module=prod&target=core-1")
	if code != http.StatusOK {
		t.Fatalf("/probe: %d %s", code, body)
	}
	up := parseProbe(t, body)["indexima_up"]
	if up == nil || len(up.Metric) != 1 || up.Metric[0].GetGauge().GetValue() != 1 {
		t.Fatalf("/probe of core-1: indexima_up is not 1:\n%s", body)
	}
	st := prod.sim.Stats()
	if st.NodeRequests[prod.nodes["core-1"]] == 0 || st.NodeRequests[prod.nodes["core-2"]] != 0 {
		t.Fatalf("/probe of core-1 must call core-1 and only it: %v", st.NodeRequests)
	}
}
