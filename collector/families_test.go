package collector

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/poller"
)

// The families /metrics writes without a registry (familySink) hold what a
// registry gathers from the same scrape through the collector's channel:
// the same families with the same help and type, and the same series, each
// with the same labels, value, buckets and created timestamp; only the
// order of the series within a family may differ. Checked over scrapes
// that see every kind of series: each sub-collector on, one cluster
// (node label only) and two (cluster label too), events of every type and
// of unknown types, NODE_DOWN reports, label values past their bound, a
// node failing its calls (failure reasons) and one never contacted.
func TestFamiliesAreWhatTheRegistryGathers(t *testing.T) {
	for _, named := range []bool{false, true} {
		t.Run(fmt.Sprintf("cluster-label=%v", named), func(t *testing.T) {
			seen := map[string]bool{}
			scenario(t, named, 8, func(e *env, step int) {
				for _, name := range gatherBothWays(t, e, step) {
					seen[name] = true
				}
			})
			// The scrapes saw the families this test is about.
			for _, name := range []string{"indexima_events_total", "indexima_event_duration_seconds",
				"indexima_node_down_reports_total", "indexima_exporter_label_values_dropped_total",
				"indexima_exporter_node_poll_failures_total", "indexima_table_columns", "indexima_console_up",
				"indexima_exporter_collector_success", "indexima_cluster_state", "indexima_node_info"} {
				if !seen[name] {
					t.Errorf("no scrape had %s: the test misses what it is about", name)
				}
			}
		})
	}
}

// gatherBothWays polls every node once, writes the families without a
// registry and checks them against what a registry gathers of the same
// scrape; it returns the names of the former. The families are those of the previous
// step, emptied, as the scrapes of /metrics reuse them (ScrapeGatherer):
// a series left over from a scrape, or a value shared by two, shows here.
func gatherBothWays(t *testing.T, e *env, step int) []string {
	t.Helper()
	clusters, results := e.pollAll()
	if e.sink == nil {
		e.sink = new(familySink)
	}
	s := e.sink
	defer s.reset()
	e.exp.emit(s, clusters, results)
	got := s.gathered()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectorFunc(func(ch chan<- prometheus.Metric) { e.exp.emit(chanSink(ch), clusters, results) }))
	want, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	compareFamilies(t, fmt.Sprintf("step %d", step), got, want)
	names := make([]string, len(got))
	for i, mf := range got {
		names[i] = mf.GetName()
	}
	return names
}

// The same on other schedules: the simulator's seed and rate of events,
// the cluster label or not, the number of scrapes (make fuzz runs it
// longer).
func FuzzFamiliesAreWhatTheRegistryGathers(f *testing.F) {
	f.Add(int64(1), uint8(2), false, uint8(6))
	f.Add(int64(2), uint8(30), true, uint8(4))
	f.Fuzz(func(t *testing.T, seed int64, rate uint8, named bool, steps uint8) {
		scenarioOf(t, seed, float64(rate%40)/4, named, int(steps%10)+1, func(e *env, step int) {
			gatherBothWays(t, e, step)
		})
	})
}

// scenario runs steps scrapes of four nodes that see every kind of series:
// each sub-collector on, one cluster (node label only) or two (named:
// cluster label too), events of every type and of unknown types, NODE_DOWN
// reports, label values past their bound, a node failing its calls
// (failure reasons) and one never contacted. At each step check polls
// every node once (e.pollAll, or a scrape of its own).
func scenario(t *testing.T, named bool, steps int, check func(e *env, step int)) {
	scenarioOf(t, 11, 4, named, steps, check)
}

// scenarioOf is scenario with the simulator's seed and rate of events.
func scenarioOf(t *testing.T, seed int64, rate float64, named bool, steps int, check func(e *env, step int)) {
	e := newEnv(t, simulator.Config{Seed: seed, Rate: rate}, 4, testOptions{
		Enabled:        map[string]bool{"columns": true},
		MaxLabelValues: 2, MaxEventTypes: 2,
	})
	if named {
		e.p.SetClusters([]poller.Cluster{e.cluster("east", e.nodes[:2]...), e.cluster("west", e.nodes[2:]...)})
	}
	r := rand.New(rand.NewPCG(uint64(seed), uint64(len(e.nodes))))
	// The last node fails from the start: never contacted, it still has
	// its up, poll duration and failure series.
	e.sim.SetNodeFault(e.nodes[3], simulator.Fault{Status: 502})
	for step := range steps {
		switch step {
		case 3:
			e.sim.ReportNodeDown(e.nodes[0], e.nodes[1])
			e.sim.ReportNodeDown(e.nodes[0], e.nodes[2])
			e.sim.ReportNodeDown(e.nodes[0], e.nodes[3]) // past the bound of 2
		case 4:
			now := e.clock.Now().UnixMilli()
			e.sim.Append(e.nodes[1], simulator.Event{Type: "NEW_KIND", Date: now - 500, Duration: 20},
				simulator.Event{Type: "OTHER_KIND", Date: now - 400, Duration: 20},
				simulator.Event{Type: "THIRD_KIND", Date: now - 300, Duration: 20})
		case 5:
			e.sim.SetNodeFault(e.nodes[2], simulator.Fault{Body: simulator.BodyMalformedJSON, Count: 1})
		}
		e.advance(r, 10*time.Second, 40*time.Second)
		check(e, step)
	}
}

// pollAll polls every node once and returns the configuration's clusters
// and the results.
func (e *env) pollAll() ([]*clusterSeries, []poller.Result) {
	clusters := e.exp.seriesOf(e.p.Current())
	return clusters, e.exp.poll(context.Background(), clusters)
}

// compareFamilies fails unless got and want have the same families in the
// same order and the same series in any order. The sub-collectors'
// durations are timed at each emission and are compared by presence only.
func compareFamilies(t *testing.T, what string, got, want []*dto.MetricFamily) {
	t.Helper()
	names := func(mfs []*dto.MetricFamily) (out []string) {
		for _, mf := range mfs {
			out = append(out, mf.GetName())
		}
		return out
	}
	if g, w := strings.Join(names(got), " "), strings.Join(names(want), " "); g != w {
		t.Fatalf("%s: families\n got %s\nwant %s", what, g, w)
	}
	for i := range got {
		g, w := normalized(got[i]), normalized(want[i])
		if !proto.Equal(g, w) {
			t.Errorf("%s: family %s differs:\n got %v\nwant %v", what, g.GetName(), g, w)
		}
	}
}

// normalized is a copy of mf with its series sorted by their labels (and
// the durations of the sub-collectors zeroed).
func normalized(mf *dto.MetricFamily) *dto.MetricFamily {
	out := proto.Clone(mf).(*dto.MetricFamily)
	key := func(m *dto.Metric) string {
		var b strings.Builder
		for _, p := range m.GetLabel() {
			b.WriteString(p.GetName() + "=" + p.GetValue() + "\x00")
		}
		return b.String()
	}
	sort.SliceStable(out.Metric, func(i, j int) bool { return key(out.Metric[i]) < key(out.Metric[j]) })
	if out.GetName() == collectorDurationDesc.name {
		for _, m := range out.Metric {
			m.Gauge.Value = proto.Float64(0)
		}
	}
	return out
}

// The families a scrape writes through ScrapeGatherer (the protobuf
// format, a name[] filter, a scrape that meets another writing its text)
// are kept for the next such scrape, but not for good: they are every
// series of every node, and most scrapes write text. Held after one such
// scrape, they were 15 MiB of the RSS of 200 nodes' day. Two collections
// after the answer, with text scrapes since, the live heap is back within
// a quarter of what the families took while the answer was written.
func TestGatheredFamiliesAreNotHeldForGood(t *testing.T) {
	e := newEnv(t, simulator.Config{Seed: 3, Rate: 5}, 100, testOptions{})
	ctx := context.Background()
	format := negotiate(textAccepts["prometheus-3"])
	textScrape := func() {
		t.Helper()
		ts, ok := e.exp.ScrapeText(ctx, format)
		if !ok {
			t.Fatal("ScrapeText refused a scrape with none under way")
		}
		if err := ts.WriteTo(io.Discard, nil); err != nil {
			t.Fatal(err)
		}
		ts.Close()
	}
	// The simulated clock stands still: no new event, the same series. The
	// first scrapes make what the exporter keeps (first contact, the kept
	// lines, the encoders' scratch).
	for range 4 {
		textScrape()
	}
	before := liveHeap()
	fams, done, err := e.exp.ScrapeGatherer(ctx).Gather()
	if err != nil {
		t.Fatal(err)
	}
	during := liveHeap()
	if len(fams) == 0 {
		t.Fatal("the scrape gathered no family")
	}
	done()
	textScrape()
	after := liveHeap()
	runtime.KeepAlive(e) // the exporter, its kept lines and states: live throughout
	held := int64(during) - int64(before)
	t.Logf("live heap: %d before, %d with the families, %d two collections after", before, during, after)
	if held < 256<<10 {
		t.Fatalf("the families of 100 nodes took %d bytes: the test misses what it is about", held)
	}
	if kept := int64(after) - int64(before); kept > held/4 {
		t.Errorf("%d of the %d bytes of the families are still live two collections after their answer", kept, held)
	}
}

// liveHeap returns the bytes of live objects after two collections (the
// second takes what pools kept through the first).
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
