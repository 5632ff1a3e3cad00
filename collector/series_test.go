package collector

import (
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"
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
		v := &nodeView{d: d, labels: labels, pairs: labelPairs(names, labels)}
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
			ch := make(chan prometheus.Metric, 1)
			if c.counter {
				v.counter(ch, c.desc, c.value, c.extra)
			} else {
				v.gauge(ch, c.desc, c.value, c.extra)
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
			if got.Desc() != want.Desc() {
				t.Errorf("%s: descriptor differs", c.desc)
			}
			if g, w := written(t, got), written(t, want); !proto.Equal(g, w) {
				t.Errorf("cluster=%v %s %q:\n got %v\nwant %v", withCluster, c.desc, c.extra, g, w)
			}
		}

		h := &durationHist{}
		for _, s := range []float64{0.004, 0.05, 0.05, 0.3, 7, 100, 5000} {
			h.observe(s)
		}
		ch := make(chan prometheus.Metric, 1)
		v.histogram(ch, d.eventDuration, h, "TABLE_LOADED")
		got := <-ch
		cum := map[float64]uint64{}
		for _, b := range durationBuckets {
			cum[b] = 0 // every bound is written, even an empty one
		}
		for _, s := range []float64{0.004, 0.05, 0.05, 0.3, 7, 100, 5000} {
			for _, b := range durationBuckets {
				if s <= b {
					cum[b]++
				}
			}
		}
		want := prometheus.MustNewConstHistogram(d.eventDuration.Desc, 7, h.Sum, cum, append(append([]string(nil), labels...), "TABLE_LOADED")...)
		if g, w := written(t, got), written(t, want); !proto.Equal(g, w) {
			t.Errorf("cluster=%v histogram:\n got %v\nwant %v", withCluster, g, w)
		}
	}
}

// observed returns a histogram of the durations under the given bounds,
// as the collector of that version would have kept it.
func observed(bounds []float64, durations []float64) *durationHist {
	h := &durationHist{Buckets: make([]uint64, len(bounds))}
	for _, s := range durations {
		h.observeIn(bounds, s)
	}
	return h
}

func TestRebinOfASavedHistogramIsExact(t *testing.T) {
	durations := []float64{0.001, 0.01, 0.03, 0.05, 0.07, 0.1, 0.2, 0.25, 0.4, 0.5, 0.9, 1, 2, 2.5,
		4, 5, 9, 10, 20, 30, 45, 60, 100, 120, 200, 300, 500, 600, 1000, 1800, 2000, 99999}
	want := observed(durationBuckets[:], durations)

	// A state file written before the bounds were saved: 15 buckets.
	legacy := observed(legacyDurationBuckets, durations)
	legacy.rebin()
	if !slices.Equal(legacy.Bounds, durationBuckets[:]) || len(legacy.Buckets) != len(durationBuckets) {
		t.Fatalf("rebinned to bounds %v, %d buckets", legacy.Bounds, len(legacy.Buckets))
	}
	for i := range want.Buckets {
		if legacy.Buckets[i] != want.Buckets[i] {
			t.Fatalf("legacy histogram rebinned to %v, observing the same durations gives %v", legacy.Buckets, want.Buckets)
		}
	}
	if legacy.Count != want.Count || legacy.Sum != want.Sum {
		t.Fatalf("count/sum changed by the rebin: %d/%v, want %d/%v", legacy.Count, legacy.Sum, want.Count, want.Sum)
	}

	// Saved with the current bounds: unchanged.
	same := observed(durationBuckets[:], durations)
	same.Bounds = append([]float64(nil), durationBuckets[:]...)
	same.rebin()
	for i := range want.Buckets {
		if same.Buckets[i] != want.Buckets[i] {
			t.Fatalf("a histogram with the current bounds changed: %v, want %v", same.Buckets, want.Buckets)
		}
	}
}

func TestRebinOfADamagedHistogramKeepsTheCount(t *testing.T) {
	for name, h := range map[string]*durationHist{
		"bounds not increasing":    {Bounds: []float64{5, 1}, Buckets: []uint64{3, 4}, Count: 9, Sum: 20},
		"bounds and buckets apart": {Bounds: []float64{1, 5, 10}, Buckets: []uint64{3, 4}, Count: 9, Sum: 20},
		"no bounds, odd length":    {Buckets: []uint64{1, 2, 3}, Count: 9, Sum: 20},
		"buckets above the count":  {Bounds: []float64{1, 5}, Buckets: []uint64{8, 8}, Count: 9, Sum: 20},
	} {
		h.rebin()
		var inBuckets uint64
		for _, n := range h.Buckets {
			inBuckets += n
		}
		if len(h.Buckets) != len(durationBuckets) || inBuckets > h.Count || h.Count != 9 || h.Sum != 20 {
			t.Errorf("%s: rebinned to %v (count %d, sum %v): want %d buckets holding at most the count 9, sum 20",
				name, h.Buckets, h.Count, h.Sum, len(durationBuckets))
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
	v := &nodeView{d: d, labels: labels, pairs: labelPairs([]string{"cluster", "node"}, labels)}
	ch := make(chan prometheus.Metric, 1)
	for _, c := range []struct {
		name   string
		emit   func()
		atMost float64
	}{
		{"node labels only", func() { v.gauge(ch, d.up, 1, ""); <-ch }, 1},
		{"shared event pair", func() { v.counter(ch, d.eventsTotal, 3, "TABLE_LOADED"); <-ch }, 2},
		{"shared state pair", func() { v.gauge(ch, d.clusterState, 1, "ready"); <-ch }, 2},
		{"own table pair", func() { v.gauge(ch, d.table, 1, "etalon.nyc_taxi"); <-ch }, 4},
	} {
		if got := testing.AllocsPerRun(200, c.emit); got > c.atMost {
			t.Errorf("%s: %v allocations per series, want at most %v", c.name, got, c.atMost)
		}
	}
	h := &durationHist{}
	h.observe(1)
	if got := testing.AllocsPerRun(200, func() { v.histogram(ch, d.eventDuration, h, "TABLE_LOADED"); <-ch }); got > 2 {
		t.Errorf("histogram: %v allocations, want at most 2 (the histogram and its label slice)", got)
	}
}
