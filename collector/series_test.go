package collector

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/indexima-exporter/indexima_exporter/tally"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// written returns what a metric writes.
func written(t *testing.T, m prometheus.Metric) *dto.Metric {
	t.Helper()
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// The fast series must write exactly what client_golang's const metrics
// write for the same values: same label pairs in the same order (the extra
// label sorts before or after the node labels), same value or buckets.
func TestSeriesWriteWhatConstMetricsWrite(t *testing.T) {
	for _, withCluster := range []bool{false, true} {
		d := newDescs(withCluster)
		labels, names := []string{"core-1"}, []string{"node"}
		if withCluster {
			labels, names = []string{"prod", "core-1"}, []string{"cluster", "node"}
		}
		created := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
		ch := make(chan prometheus.Metric, 1)
		v := &nodeView{out: chanSink(ch), d: d, labels: labels, pairs: labelPairs(names, labels), created: timestamppb.New(created)}
		cases := []struct {
			desc    *seriesDesc
			counter bool
			value   float64
			extra   string
		}{
			{d.up, false, 1, ""},
			{d.reported, true, 42, ""},
			{d.eventsTotal, true, 7, "NODE_DOWN"},   // "event" sorts before "node" (shared pair)
			{d.eventsTotal, true, 1, "NEW_TYPE"},    // an unknown type: a pair of its own
			{d.nodeDown, true, 3, "2"},              // "down_node" before "node"
			{d.clusterState, false, 1, "ready"},     // "state" after "node"
			{d.table, false, 1, "etalon.nyc_taxi"},  // "table" after "node"
			{d.nodeInfo, false, 1, "2023.1 (b123)"}, // "version" after "node"
			{d.dropped, true, 5, "index"},           // "label" before "node"
		}
		for _, c := range cases {
			if c.counter {
				v.counter(c.desc, c.value, c.extra)
			} else {
				v.gauge(c.desc, c.value, c.extra)
			}
			got := <-ch
			lv := append([]string(nil), labels...)
			if c.extra != "" {
				lv = append(lv, c.extra)
			}
			vt := prometheus.GaugeValue
			if c.counter {
				vt = prometheus.CounterValue
			}
			want := prometheus.MustNewConstMetric(c.desc.Desc, vt, c.value, lv...)
			if c.counter {
				want = prometheus.MustNewConstMetricWithCreatedTimestamp(c.desc.Desc, vt, c.value, created, lv...)
			}
			if got.Desc() != want.Desc() {
				t.Errorf("%s: descriptor differs", c.desc)
			}
			if g, w := written(t, got), written(t, want); !proto.Equal(g, w) {
				t.Errorf("cluster=%v %s %q:\n got %v\nwant %v", withCluster, c.desc, c.extra, g, w)
			}
		}

		h := &tally.Histogram{}
		for _, s := range []float64{0.004, 0.05, 0.05, 0.3, 7, 100, 5000} {
			h.Observe(s)
		}
		v.histogram(d.eventDuration, h, "TABLE_LOADED")
		got := <-ch
		cum := map[float64]uint64{}
		for _, b := range tally.DurationBuckets {
			cum[b] = 0 // every bound is written, even an empty one
		}
		for _, s := range []float64{0.004, 0.05, 0.05, 0.3, 7, 100, 5000} {
			for _, b := range tally.DurationBuckets {
				if s <= b {
					cum[b]++
				}
			}
		}
		want := prometheus.MustNewConstHistogramWithCreatedTimestamp(d.eventDuration.Desc, 7, h.Sum, cum, created, append(append([]string(nil), labels...), "TABLE_LOADED")...)
		if g, w := written(t, got), written(t, want); !proto.Equal(g, w) {
			t.Errorf("cluster=%v histogram:\n got %v\nwant %v", withCluster, g, w)
		}
	}
}

// The point of the fast series is their cost: one allocation for a series
// with only node labels, two with a shared event or state pair, four with
// a pair of its own (a table name), where MustNewConstMetric made about
// eight. A change that loses this shows here, not only in the harness.
func TestSeriesAllocations(t *testing.T) {
	d := newDescs(true)
	labels := []string{"prod", "core-1"}
	ch := make(chan prometheus.Metric, 1)
	v := &nodeView{out: chanSink(ch), d: d, labels: labels, pairs: labelPairs([]string{"cluster", "node"}, labels)}
	for _, c := range []struct {
		name   string
		emit   func()
		atMost float64
	}{
		{"node labels only", func() { v.gauge(d.up, 1, ""); <-ch }, 1},
		{"shared event pair", func() { v.counter(d.eventsTotal, 3, "TABLE_LOADED"); <-ch }, 2},
		{"shared state pair", func() { v.gauge(d.clusterState, 1, "ready"); <-ch }, 2},
		{"own table pair", func() { v.gauge(d.table, 1, "etalon.nyc_taxi"); <-ch }, 4},
	} {
		if got := testing.AllocsPerRun(200, c.emit); got > c.atMost {
			t.Errorf("%s: %v allocations per series, want at most %v", c.name, got, c.atMost)
		}
	}
	h := &tally.Histogram{}
	h.Observe(1)
	if got := testing.AllocsPerRun(200, func() { v.histogram(d.eventDuration, h, "TABLE_LOADED"); <-ch }); got > 2 {
		t.Errorf("histogram: %v allocations, want at most 2 (the histogram and its label slice)", got)
	}
}
