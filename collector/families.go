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
// NodeCollector (/probe) still go through a registry. /metrics asked in a
// text format (what Prometheus asks) goes through text.go, which builds
// families of the series whose lines changed only; these families serve
// the protobuf format, a name[] filter, and a scrape that meets another
// one writing its text.

// ScrapeGatherer returns a TransactionalGatherer of the scrape Scrape(ctx)
// describes: every node polled within ctx's deadline, its series gathered
// without a registry. Each Gather polls again. The families a Gather
// returns are the exporter's until its done is called (once the answer is
// written): they are then emptied and written again by the next scrape,
// so that a scrape makes no new families, series or label pairs
// (docs/performance.md, "What a scrape allocates"). A scrape that overlaps
// another (two Prometheus servers) writes into families of its own.
//
// The families are kept in a pool, not held for good: most scrapes are
// in a text format (text.go), and a scrape that met another writing its
// text, or one in the protobuf format, once, held the families of every
// series after it (5 MB at 200 nodes, 15 MiB of the day's RSS).
func (e *Exporter) ScrapeGatherer(ctx context.Context) prometheus.TransactionalGatherer {
	return scrapeGatherer{e, ctx}
}

type scrapeGatherer struct {
	e   *Exporter
	ctx context.Context
}

func (g scrapeGatherer) Gather() ([]*dto.MetricFamily, func(), error) {
	s, _ := g.e.sinks.Get().(*familySink)
	if s == nil {
		s = new(familySink)
	}
	g.e.collect(g.ctx, s, g.e.seriesOf(g.e.p.Current()))
	return s.gathered(), func() {
		s.reset()
		g.e.sinks.Put(s)
	}, nil
}

// familySink writes each series into its family. It is one scrape's at a
// time: not safe for concurrent use; reset empties it for the next.
type familySink struct {
	fams   []*dto.MetricFamily // by family index (familyIndex)
	sorted []*dto.MetricFamily // gathered's answer

	metrics  slab[dto.Metric]
	gauges   slab[dto.Gauge]
	counters slab[dto.Counter]
	floats   slab[float64]
	pairs    slab[*dto.LabelPair]
	hists    slab[nodeHistogram]
}

// reset empties the families and slabs, keeping their memory.
func (s *familySink) reset() {
	for _, f := range s.fams {
		if f != nil {
			clear(f.Metric) // no pointer into the last scrape's series is kept
			f.Metric = f.Metric[:0]
		}
	}
	clear(s.sorted)
	s.sorted = s.sorted[:0]
	s.metrics.reset()
	s.gauges.reset()
	s.counters.reset()
	s.floats.reset()
	s.pairs.reset()
	s.hists.reset()
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
	if f == nil {
		f = &dto.MetricFamily{}
		s.fams[fam] = f
	}
	if len(f.Metric) == 0 { // new, or emptied by reset (a reload may have made new descriptors)
		f.Name, f.Help, f.Type = name, help, typ
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
	out := s.sorted[:0]
	for _, f := range s.fams {
		if f != nil && len(f.Metric) > 0 {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	s.sorted = out
	return out
}

// slab hands out values of T from arrays (one allocation per array),
// zeroed; reset hands the same arrays out again. The arrays double from
// slabFirst values to slabSize: a sink that holds a node's changed series
// (the text exposition's encoders) needs a few histograms, which a first
// array of slabSize held as a quarter of a megabyte each.
type slab[T any] struct {
	arrays [][]T
	a, i   int // the next value is arrays[a][i]
}

const (
	slabFirst = 8
	slabSize  = 256
)

func (s *slab[T]) reset() { s.a, s.i = 0, 0 }

func (s *slab[T]) next() *T { return &s.take(1)[0] }

// take returns n consecutive values.
func (s *slab[T]) take(n int) []T {
	for {
		if s.a == len(s.arrays) {
			s.arrays = append(s.arrays, make([]T, max(min(slabFirst<<len(s.arrays), slabSize), n)))
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
