package dashboards

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	dto "github.com/prometheus/client_model/go"
	promconfig "github.com/prometheus/common/config"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
	"github.com/indexima-exporter/indexima_exporter/collector"
	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/poller"
)

// prometheusSeries are added by Prometheus itself to every scraped target;
// dashboards may use them although the exporter does not expose them.
var prometheusSeries = []string{
	"up", "scrape_duration_seconds", "scrape_samples_scraped",
	"scrape_samples_post_metric_relabeling", "scrape_series_added",
}

// allCollectorsOn returns the sub-collector switches with every collector
// on, the names taken from the exporter's own --collector.NAME flags.
func allCollectorsOn(t *testing.T) map[string]bool {
	t.Helper()
	app := kingpin.New("dashboards-test", "")
	get := collector.RegisterFlags(app)
	var args []string
	for _, f := range app.Model().Flags {
		if name, ok := strings.CutPrefix(f.Name, "collector."); ok {
			args = append(args, "--collector."+name)
		}
	}
	if len(args) == 0 {
		t.Fatal("collector.RegisterFlags added no --collector.NAME flag")
	}
	if _, err := app.Parse(args); err != nil {
		t.Fatalf("parse %v: %v", args, err)
	}
	return get()
}

// exporterMetricNames returns every series name the exporter exposes
// (histograms expanded to _bucket, _sum, _count, and their own name), learnt
// from the exporter itself: its collector is run against the simulator through a scenario that
// makes every family appear (NODE_DOWN, a memory-low episode, a cluster
// restart loading more tables than the label bound allows), beside the API
// observer, build info, Go and process collectors that main registers.
// The collector is unchecked (its Describe sends nothing, because its labels
// depend on the configuration), so its names come from what it collects.
func exporterMetricNames(t *testing.T) map[string]bool {
	t.Helper()
	clock := simulator.NewManualClock(time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC))
	sim := simulator.New(simulator.Config{
		Users: map[string]string{"exporter": "s3cret"},
		Nodes: []simulator.NodeConfig{{Host: "node1.test"}, {Host: "node2.test"}, {Host: "node3.test"}},
		Clock: clock,
	})
	if err := sim.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })

	reg := prometheus.NewRegistry()
	obs := collector.NewAPIObserver(reg)
	client, err := apiclient.New(apiclient.Config{URL: sim.URL(), Username: "exporter",
		Password: promconfig.Secret("s3cret"), Timeout: 10 * time.Second, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	// A label bound of 2 makes the cluster restart below drop table names.
	polls := poller.New(poller.Options{MaxLabelValues: 2})
	exp, err := collector.New(polls, collector.Options{Enabled: allCollectorsOn(t)})
	if err != nil {
		t.Fatal(err)
	}
	var nodes []poller.Node
	for _, key := range sim.Nodes() {
		host, port, ok := strings.Cut(key, ":")
		if !ok {
			t.Fatalf("simulator node key %q is not host:port", key)
		}
		var p int
		if _, err := fmt.Sscan(port, &p); err != nil {
			t.Fatalf("simulator node key %q: %v", key, err)
		}
		nodes = append(nodes, poller.Node{Name: key, Target: apiclient.Node{Host: host, Port: p}})
	}
	polls.SetClusters([]poller.Cluster{{Client: client, Nodes: nodes}})
	reg.MustRegister(exp,
		versioncollector.NewCollector("indexima_exporter"),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	types := map[string]dto.MetricType{}
	gather := func() {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatalf("gather: %v", err)
		}
		for _, mf := range mfs {
			types[mf.GetName()] = mf.GetType()
		}
	}
	// Descriptors, should the collector ever describe itself: their names
	// count too (with the type learnt from collection, if any).
	descs := make(chan *prometheus.Desc, 1024)
	go func() { exp.Describe(descs); close(descs) }()
	described := map[string]bool{}
	for d := range descs {
		described[descName(t, d)] = true
	}

	gather() // first contact with every node
	n := sim.Nodes()
	sim.ReportNodeDown(n[0], n[1])
	sim.MemoryLowEpisode(n[0], sim.Indexes(n[0])[:2]...)
	clock.Advance(time.Minute)
	gather()
	sim.StopCluster()
	clock.Advance(time.Minute)
	gather()
	sim.StartCluster()
	for i := 0; i < 10; i++ { // the start's loads complete over simulated minutes
		clock.Advance(time.Minute)
		gather()
	}

	names := map[string]bool{}
	for _, s := range prometheusSeries {
		names[s] = true
	}
	for name := range described {
		if _, ok := types[name]; !ok {
			names[name] = true
		}
	}
	for name, typ := range types {
		switch typ {
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			names[name+"_bucket"], names[name+"_sum"], names[name+"_count"] = true, true, true
			// The histogram's own name is the one series Prometheus >= 3.8
			// stores instead when it converts the classic buckets
			// (convert_classic_histograms_to_nhcb): dashboards query both.
			names[name] = true
		case dto.MetricType_SUMMARY:
			names[name], names[name+"_sum"], names[name+"_count"] = true, true, true
		default:
			names[name] = true
		}
	}
	return names
}

// descName reads the fully-qualified name of a descriptor (Desc has no
// accessor; its String form is stable: Desc{fqName: "name", ...}).
func descName(t *testing.T, d *prometheus.Desc) string {
	t.Helper()
	s := d.String()
	const key = `fqName: "`
	i := strings.Index(s, key)
	if i < 0 {
		t.Fatalf("cannot read the name of descriptor %s", s)
	}
	rest := s[i+len(key):]
	j := strings.IndexByte(rest, '"')
	if j < 0 {
		t.Fatalf("cannot read the name of descriptor %s", s)
	}
	return rest[:j]
}
