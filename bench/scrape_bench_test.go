package bench

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
	"github.com/indexima-exporter/indexima_exporter/collector"
	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/poller"
)

// slowCluster is an exporter (default options) polling n simulated nodes
// through one console, every node answering latency late.
type slowCluster struct {
	sim         *simulator.Simulator
	clock       *simulator.ManualClock
	reg         *prometheus.Registry
	setupLogins int // logins of the first contact
}

func newSlowCluster(tb testing.TB, n int, latency time.Duration) *slowCluster {
	tb.Helper()
	clock := simulator.NewManualClock(time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC))
	var nodes []simulator.NodeConfig
	var targets []poller.Node
	for i := range n {
		nc := simulator.NodeConfig{Host: fmt.Sprintf("node-%03d", i), Port: 9999}
		nodes = append(nodes, nc)
		targets = append(targets, poller.Node{Target: apiclient.Node{Host: nc.Host, Port: nc.Port}})
	}
	sim := simulator.New(simulator.Config{Users: map[string]string{"bench": "bench-password"}, Nodes: nodes,
		Clock: clock, Seed: 3})
	if err := sim.Start("127.0.0.1:0"); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = sim.Close() })
	client, err := apiclient.New(apiclient.Config{URL: sim.URL(), Username: "bench", Password: "bench-password"})
	if err != nil {
		tb.Fatal(err)
	}
	polls := poller.New(poller.Options{Logger: benchLogger(tb)})
	exp, err := collector.New(polls, collector.Options{Logger: benchLogger(tb)})
	if err != nil {
		tb.Fatal(err)
	}
	polls.SetClusters([]poller.Cluster{{Client: client, Nodes: targets}})
	reg := prometheus.NewRegistry()
	reg.MustRegister(exp)
	c := &slowCluster{sim: sim, clock: clock, reg: reg}
	// First contact and version, before the latency, by two scrapes at
	// once (two Prometheus servers): still one login for every node.
	done := make(chan struct{})
	go func() { defer close(done); _, _ = reg.Gather() }()
	c.scrape(tb)
	<-done
	c.setupLogins = sim.Stats().Logins
	for _, nc := range nodes {
		sim.SetNodeFault(nc.Key(), simulator.Fault{Latency: latency})
	}
	return c
}

// scrape advances the simulated clock by a scrape interval and gathers.
func (c *slowCluster) scrape(tb testing.TB) {
	c.clock.Advance(30 * time.Second)
	fams, err := c.reg.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == "indexima_up" {
			for _, m := range f.Metric {
				if m.Gauge.GetValue() != 1 {
					tb.Fatalf("a node is down: %v", m)
				}
			}
		}
	}
}

// BenchmarkScrapeSlowNodes is one scrape of 200 nodes each answering 50 ms
// late, with the exporter's default options. The target is a scrape within
// 1.3 times the slowest node's own round trips (2 calls in the steady
// state: about 100 ms), whatever the number of nodes.
//
// Metrics: ns/op is the scrape; ratio is the median of scrape / (calls of
// the slowest node x latency); calls/node (per node and scrape) and logins
// (first contact included) come from the simulator's counters.
func BenchmarkScrapeSlowNodes(b *testing.B) {
	for _, n := range []int{10, 200} {
		b.Run(fmt.Sprintf("nodes=%d/latency=50ms", n), func(b *testing.B) {
			const latency = 50 * time.Millisecond
			c := newSlowCluster(b, n, latency)
			c.sim.ResetStats()
			var ratios []float64
			calls, logins := 0, c.setupLogins
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				c.sim.ResetStats()
				b.StartTimer()
				start := time.Now()
				c.scrape(b)
				d := time.Since(start)
				b.StopTimer()
				st := c.sim.Stats()
				slowest := 0
				for _, r := range st.NodeRequests {
					slowest = max(slowest, r)
					calls += r
				}
				logins += st.Logins
				ratios = append(ratios, float64(d)/float64(time.Duration(slowest)*latency))
				b.StartTimer()
			}
			b.StopTimer()
			sort.Float64s(ratios)
			b.ReportMetric(ratios[len(ratios)/2], "ratio")
			b.ReportMetric(float64(calls)/float64(n*b.N), "calls/node")
			b.ReportMetric(float64(logins), "logins")
		})
	}
}
