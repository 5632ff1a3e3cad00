package collector

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	promconfig "github.com/prometheus/common/config"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
	"github.com/indexima-exporter/indexima_exporter/internal/simtest"
	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/poller"
)

// env is one test setup: a simulator on loopback with a manual clock, a real
// client and the exporter registered on its own registry.
type env struct {
	t     *testing.T
	sim   *simulator.Simulator
	clock *simulator.ManualClock
	p     *poller.Poller
	exp   *Exporter
	reg   *prometheus.Registry
	// sink is the families gatherBothWays writes each step into, emptied
	// after each, as ScrapeGatherer reuses them.
	sink  *familySink
	nodes []string // simulator node keys, also the node label values
	// timeout of the clients made by client(); 0: 5s.
	timeout time.Duration
	// observer of the clients made by client(); may be nil.
	observer apiclient.Observer
	// maxBody is the clients' body limit (0: the client's default).
	maxBody int64
	// baseline is each node's `last` at first contact (its now then), and
	// high its highest now seen by a scrape (a shifted clock goes back).
	baseline map[string]int64
	high     map[string]int64
}

var testStart = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

// testOptions are the poller's and the exporter's options of a test.
type testOptions struct {
	Logger         log.Logger
	Enabled        map[string]bool
	MaxLabelValues int
	MaxEventTypes  int
	InfoRefresh    time.Duration
	LookBack       time.Duration
	LookBackCalls  int
}

// newExporter returns a poller and an exporter reading it.
func newExporter(t *testing.T, opts testOptions) (*poller.Poller, *Exporter) {
	t.Helper()
	p := poller.New(poller.Options{Logger: opts.Logger, MaxLabelValues: opts.MaxLabelValues, MaxEventTypes: opts.MaxEventTypes,
		InfoRefresh: opts.InfoRefresh, LookBack: opts.LookBack, LookBackCalls: opts.LookBackCalls})
	exp, err := New(p, Options{Logger: opts.Logger, Enabled: opts.Enabled})
	if err != nil {
		t.Fatal(err)
	}
	return p, exp
}

func newEnv(t *testing.T, cfg simulator.Config, nodes int, opts testOptions) *env {
	t.Helper()
	return newEnvAt(t, testStart, cfg, nodes, opts)
}

// newEnvAt is newEnv with the simulated clock starting at start.
func newEnvAt(t *testing.T, start time.Time, cfg simulator.Config, nodes int, opts testOptions) *env {
	t.Helper()
	sim, clock := simtest.Start(t, start, cfg, nodes)
	if opts.Logger == nil {
		opts.Logger = simtest.Logger(t)
	}
	p, exp := newExporter(t, opts)
	e := &env{t: t, sim: sim, clock: clock, p: p, exp: exp, reg: prometheus.NewRegistry(),
		nodes: sim.Nodes(), baseline: map[string]int64{}, high: map[string]int64{}}
	e.reg.MustRegister(exp)
	p.SetClusters([]poller.Cluster{e.cluster("", e.nodes...)})
	return e
}

// client returns a real client of the simulator's console.
func (e *env) client() *apiclient.Client {
	c, err := apiclient.New(apiclient.Config{URL: e.sim.URL(), Username: "exporter",
		Password: promconfig.Secret("s3cret"), Timeout: cmp.Or(e.timeout, 5*time.Second),
		Observer: e.observer, MaxBodyBytes: e.maxBody})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// cluster builds a configured cluster of the given simulator node keys.
func (e *env) cluster(name string, keys ...string) poller.Cluster {
	c := poller.Cluster{Name: name, Client: e.client()}
	for _, k := range keys {
		host, port := splitKey(e.t, k)
		c.Nodes = append(c.Nodes, poller.Node{Name: k, Target: apiclient.Node{Host: host, Port: port}})
	}
	return c
}

func splitKey(t *testing.T, key string) (string, int) {
	i := strings.LastIndexByte(key, ':')
	var port int
	if _, err := fmt.Sscan(key[i+1:], &port); err != nil {
		t.Fatalf("node key %q: %v", key, err)
	}
	return key[:i], port
}

// nodeNow is a node's clock in Unix ms, read from the truth's point of view:
// the console clock plus the node's shift.
func (e *env) nowMS() int64 { return e.clock.Now().UnixMilli() }

// scrape gathers once and records each node's baseline (first scrape) and
// highest now. shift gives the nodes' clock offsets (ShiftClock) in ms.
func (e *env) scrape(shift map[string]int64) metrics {
	e.t.Helper()
	for _, n := range e.nodes {
		now := e.nowMS() + shift[n]
		if _, ok := e.baseline[n]; !ok {
			e.baseline[n] = now
		}
		e.high[n] = max(e.high[n], now)
	}
	mfs, err := e.reg.Gather()
	if err != nil {
		e.t.Fatalf("gather: %v", err)
	}
	return metrics(mfs)
}

// truth counts, by event type, the events of node completed after the first
// contact and no later than the node's highest now seen by a scrape.
func (e *env) truth(node string) map[string]int {
	got := map[string]int{}
	for _, ev := range e.sim.Truth(node) {
		if ev.CompletedAt > e.baseline[node] && ev.CompletedAt <= e.high[node] {
			got[ev.Type]++
		}
	}
	return got
}

// checkTruth compares indexima_events_total of every node with the truth,
// for the ten known types and every type the truth or the exporter has.
func (e *env) checkTruth(m metrics, label func(string) string) {
	e.t.Helper()
	for _, n := range e.nodes {
		want := map[string]float64{}
		for _, typ := range knownTypes {
			want[typ] = 0
		}
		for typ, c := range e.truth(n) {
			if label != nil {
				typ = label(typ)
			}
			want[typ] += float64(c)
		}
		got := map[string]float64{}
		for _, s := range m.series("indexima_events_total", map[string]string{"node": n}) {
			got[s.labels["event"]] = s.value
		}
		if fmt.Sprint(sortedPairs(got)) != fmt.Sprint(sortedPairs(want)) {
			e.t.Errorf("node %s: events_total\n got %v\nwant %v", n, sortedPairs(got), sortedPairs(want))
		}
	}
}

func sortedPairs(m map[string]float64) []string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s=%g", k, v))
	}
	sort.Strings(out)
	return out
}

// advance moves the clock by a pseudo-random step in [lo, hi).
func (e *env) advance(r *rand.Rand, lo, hi time.Duration) {
	e.clock.Advance(lo + time.Duration(r.Int64N(int64(hi-lo))))
}

// ---- reading gathered metrics ----

type metrics []*dto.MetricFamily

type sample struct {
	labels map[string]string
	value  float64
	hist   *dto.Histogram
}

// series returns the samples of family name whose labels include match.
func (m metrics) series(name string, match map[string]string) []sample {
	var out []sample
	for _, mf := range m {
		if mf.GetName() != name {
			continue
		}
	metric:
		for _, mt := range mf.GetMetric() {
			ls := map[string]string{}
			for _, lp := range mt.GetLabel() {
				ls[lp.GetName()] = lp.GetValue()
			}
			for k, v := range match {
				if ls[k] != v {
					continue metric
				}
			}
			s := sample{labels: ls}
			switch {
			case mt.Counter != nil:
				s.value = mt.Counter.GetValue()
			case mt.Gauge != nil:
				s.value = mt.Gauge.GetValue()
			case mt.Histogram != nil:
				s.hist = mt.Histogram
				s.value = float64(mt.Histogram.GetSampleCount())
			}
			out = append(out, s)
		}
	}
	return out
}

// value returns the single sample of name matching labels, failing the test
// when there is not exactly one.
func (m metrics) value(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	s := m.series(name, labels)
	if len(s) != 1 {
		t.Fatalf("%s%v: %d series, want 1", name, labels, len(s))
	}
	return s[0].value
}

func l(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}
