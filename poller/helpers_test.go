package poller

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	promconfig "github.com/prometheus/common/config"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
	"github.com/indexima-exporter/indexima_exporter/internal/simtest"
	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// env is one test setup: a simulator on loopback with a manual clock, a real
// client and a poller of its nodes.
type env struct {
	t     *testing.T
	sim   *simulator.Simulator
	clock *simulator.ManualClock
	p     *Poller
	nodes []string // simulator node keys, also the nodes' names
	// timeout of the clients made by client(); 0: 5s.
	timeout time.Duration
	// baseline is each node's `last` at first contact (its now then), and
	// high its highest now seen by a poll.
	baseline map[string]int64
	high     map[string]int64
}

var testStart = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

func newEnv(t *testing.T, cfg simulator.Config, nodes int, opts Options) *env {
	t.Helper()
	sim, clock := simtest.Start(t, testStart, cfg, nodes)
	if opts.Logger == nil {
		opts.Logger = simtest.Logger(t)
	}
	e := &env{t: t, sim: sim, clock: clock, p: New(opts), nodes: sim.Nodes(),
		baseline: map[string]int64{}, high: map[string]int64{}}
	e.p.SetClusters([]Cluster{e.cluster("", e.nodes...)})
	return e
}

// client returns a real client of the simulator's console.
func (e *env) client() *apiclient.Client {
	c, err := apiclient.New(apiclient.Config{URL: e.sim.URL(), Username: "exporter",
		Password: promconfig.Secret("s3cret"), Timeout: cmp.Or(e.timeout, 5*time.Second)})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// cluster builds a configured cluster of the given simulator node keys.
func (e *env) cluster(name string, keys ...string) Cluster {
	c := Cluster{Name: name, Client: e.client()}
	for _, k := range keys {
		i := strings.LastIndexByte(k, ':')
		var port int
		if _, err := fmt.Sscan(k[i+1:], &port); err != nil {
			e.t.Fatalf("node key %q: %v", k, err)
		}
		c.Nodes = append(c.Nodes, Node{Name: k, Target: apiclient.Node{Host: k[:i], Port: port}})
	}
	return c
}

// allNodes returns every configured node.
func (e *env) allNodes() []*NodeRuntime {
	var out []*NodeRuntime
	for _, c := range e.p.Current().Clusters {
		out = append(out, c.Nodes...)
	}
	return out
}

// poll polls every configured node once, as a scrape with the default
// collectors does (the version info call on), and records each node's
// baseline (first poll) and highest now. It returns the results by node name.
func (e *env) poll() map[string]Result {
	e.t.Helper()
	for _, n := range e.nodes {
		now := e.clock.Now().UnixMilli()
		if _, ok := e.baseline[n]; !ok {
			e.baseline[n] = now
		}
		e.high[n] = max(e.high[n], now)
	}
	return e.pollNodes()
}

// pollNodes polls every configured node once, as poll, without recording
// the clock (several may run at once).
func (e *env) pollNodes() map[string]Result {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultScrapeBudget)
	defer cancel()
	nodes := e.allNodes()
	res := e.p.PollNodes(ctx, nodes, InfoCalls{Version: true})
	out := map[string]Result{}
	for i, n := range nodes {
		out[n.Name()] = res[i]
	}
	return out
}

// state returns a node's committed state.
func (e *env) state(name string) *tracker.State {
	e.t.Helper()
	for _, n := range e.allNodes() {
		if n.Name() == name {
			return n.Committed().State
		}
	}
	e.t.Fatalf("no node %s", name)
	return nil
}

// counted returns a node's counters by event type, those at 0 left out.
func (e *env) counted(name string) string {
	got := map[string]uint64{}
	for typ, c := range e.state(name).Events {
		if c > 0 {
			got[typ] = c
		}
	}
	return sortedPairs(got)
}

// checkTruth compares the counters of every node with the truth: the
// events completed after the first contact and no later than the node's
// highest now seen by a poll.
func (e *env) checkTruth() {
	e.t.Helper()
	for _, n := range e.nodes {
		want := map[string]uint64{}
		for _, ev := range e.sim.Truth(n) {
			if ev.CompletedAt > e.baseline[n] && ev.CompletedAt <= e.high[n] {
				want[ev.Type]++
			}
		}
		if got := e.counted(n); got != sortedPairs(want) {
			e.t.Errorf("node %s: events\n got %v\nwant %v", n, got, sortedPairs(want))
		}
	}
}

func sortedPairs(m map[string]uint64) string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// advance moves the clock by a pseudo-random step in [lo, hi).
func (e *env) advance(r *rand.Rand, lo, hi time.Duration) {
	e.clock.Advance(lo + time.Duration(r.Int64N(int64(hi-lo))))
}
