package collector

import (
	"context"
	"sort"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/indexima-exporter/indexima_exporter/tally"
)

// The families of /metrics, written without the registry. Through a
// registry, every series of every node is a prometheus.Metric sent over a
// channel to the registry's goroutine, written into a new dto.Metric,
// checked against its descriptor, hashed against duplicates and sorted
// among its family, which for thousands of nodes of a hundred-odd series
// is a large share of the exporter's CPU and garbage (docs/performance.md).
// None of it can find anything here: the series are valid by construction
// (series.go), a node's series are unique (one per key of a map of its
// state), node labels are unique per cluster (config) and the cluster label
// tells the clusters apart. So a scrape writes its series straight into
// their families, the dto values taken from slabs (a few allocations per
// node rather than several per series).
//
// What differs from a registry's Gather: the series of a family come node
// by node, in the configured order, where a registry sorts them by their
// label values. Families are sorted by name, and each series is what the
// registry would hold (TestFamiliesAreWhatTheRegistryGathers). Collect and
// NodeCollector (/probe) still go through a registry.

// ScrapeGatherer returns a Gatherer of the scrape Scrape(ctx) describes:
// every node polled within ctx's deadline, its series gathered without a
// registry. Each Gather polls again.
func (e *Exporter) ScrapeGatherer(ctx context.Context) prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		var s familySink
		e.collect(ctx, &s, e.seriesOf(e.p.Current()))
		return s.gathered(), nil
	})
}

// familySink writes each series into its family. It is one scrape's: not
// safe for concurrent use.
type familySink struct {
	fams []*dto.MetricFamily // by family index (familyIndex)

	metrics  slab[dto.Metric]
	gauges   slab[dto.Gauge]
	counters slab[dto.Counter]
	floats   slab[float64]
	pairs    slab[*dto.LabelPair]
	hists    slab[nodeHistogram]
}

var (
	gaugeType     = dto.MetricType_GAUGE.Enum()
	counterType   = dto.MetricType_COUNTER.Enum()
	histogramType = dto.MetricType_HISTOGRAM.Enum()
)

// metric returns a new series of family fam (made with name, help and
// typ at its first series).
func (s *familySink) metric(fam int, name, help *string, typ *dto.MetricType) *dto.Metric {
	if fam >= len(s.fams) {
		s.fams = append(s.fams, make([]*dto.MetricFamily, fam+1-len(s.fams))...)
	}
	f := s.fams[fam]
	if f == nil { // kept, emptied, by reset
		f = &dto.MetricFamily{Name: name, Help: help, Type: typ}
		s.fams[fam] = f
	}
	m := s.metrics.next()
	f.Metric = append(f.Metric, m)
	return m
}

// labels is seriesDesc.labels with the slice taken from the slab.
func (s *familySink) labels(d *seriesDesc, node []*dto.LabelPair, extra string) []*dto.LabelPair {
	if d.extra == "" {
		return node // shared, never modified
	}
	out := s.pairs.take(len(node) + 1)
	copy(out, node[:d.extraAt])
	out[d.extraAt] = d.extraPair(extra)
	copy(out[d.extraAt+1:], node[d.extraAt:])
	return out
}

func (s *familySink) value(v float64) *float64 {
	p := s.floats.next()
	*p = v
	return p
}

func (s *familySink) gauge(d *seriesDesc, node []*dto.LabelPair, extra string, value float64) {
	m := s.metric(d.fam, &d.name, &d.help, gaugeType)
	m.Label = s.labels(d, node, extra)
	g := s.gauges.next()
	g.Value = s.value(value)
	m.Gauge = g
}

func (s *familySink) counter(d *seriesDesc, node []*dto.LabelPair, extra string, value float64, created *timestamppb.Timestamp) {
	m := s.metric(d.fam, &d.name, &d.help, counterType)
	m.Label = s.labels(d, node, extra)
	c := s.counters.next()
	c.Value, c.CreatedTimestamp = s.value(value), created
	m.Counter = c
}

func (s *familySink) histogram(d *seriesDesc, node []*dto.LabelPair, extra string, dh *tally.Histogram, created *timestamppb.Timestamp) {
	m := s.metric(d.fam, &d.name, &d.help, histogramType)
	m.Label = s.labels(d, node, extra)
	h := s.hists.next()
	h.fill(dh, created)
	m.Histogram = &h.hist
}

func (s *familySink) scrapeGauge(d *scrapeDesc, value float64, labelValues ...string) {
	m := s.metric(d.fam, &d.name, &d.help, gaugeType)
	if len(labelValues) > 0 {
		m.Label = labelPairs(d.labels, labelValues)
	}
	g := s.gauges.next()
	g.Value = s.value(value)
	m.Gauge = g
}

// gathered returns the families written, sorted by name.
func (s *familySink) gathered() []*dto.MetricFamily {
	out := make([]*dto.MetricFamily, 0, len(s.fams))
	for _, f := range s.fams {
		if f != nil && len(f.Metric) > 0 {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out
}

// slab hands out values of T from arrays of slabSize (one allocation per
// slabSize values), zeroed.
type slab[T any] struct {
	arrays [][]T
	a, i   int // the next value is arrays[a][i]
}

const slabSize = 256

func (s *slab[T]) next() *T { return &s.take(1)[0] }

// take returns n consecutive values.
func (s *slab[T]) take(n int) []T {
	for {
		if s.a == len(s.arrays) {
			s.arrays = append(s.arrays, make([]T, max(slabSize, n)))
		}
		if arr := s.arrays[s.a]; s.i+n <= len(arr) {
			out := arr[s.i : s.i+n : s.i+n]
			s.i += n
			clear(out)
			return out
		}
		s.a, s.i = s.a+1, 0
	}
}
