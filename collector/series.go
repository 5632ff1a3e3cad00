package collector

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// The per-node series are const metrics, made at scrape time like those of
// prometheus.MustNewConstMetric and MustNewConstHistogram, but built for a
// scrape of hundreds of nodes with a hundred series each: the node's label
// pairs are made once per node and shared by its series, label values are
// valid by construction (node names come from the configuration, the rest
// is sanitised when learned from events), and the place of the one extra
// label among the sorted pairs is known from the descriptor; the pairs of
// event types and cluster states are shared by every node. A series then
// costs one or two small allocations instead of about eight, and no
// validation or sort (docs/performance.md).

// seriesDesc is a per-node descriptor: the node labels ([cluster,] node),
// then at most one extra label.
type seriesDesc struct {
	*prometheus.Desc
	extra   string // name of the extra label; "" when there is none
	extraAt int    // index of the extra label among the sorted label pairs
}

func newSeriesDesc(name, help string, nodeLabels []string, extra string) *seriesDesc {
	labels := append([]string(nil), nodeLabels...)
	d := &seriesDesc{extra: extra}
	if extra != "" {
		labels = append(labels, extra)
		for _, l := range nodeLabels {
			if l < extra {
				d.extraAt++
			}
		}
	}
	d.Desc = prometheus.NewDesc(name, help, labels, nil)
	return d
}

// labelPairs returns the label pairs of a node's labels, sorted by name as
// the exposition wants them (cluster sorts before node).
func labelPairs(names, values []string) []*dto.LabelPair {
	pairs := make([]*dto.LabelPair, len(names))
	for i := range names {
		name, value := names[i], values[i]
		pairs[i] = &dto.LabelPair{Name: &name, Value: &value}
	}
	return pairs
}

// sharedPairs are the extra label pairs of the fixed vocabularies (the
// known event types and OTHER, the cluster states), made once and shared by
// every node: most series of a node carry one of them.
var sharedPairs = func() map[string]map[string]*dto.LabelPair {
	m := map[string]map[string]*dto.LabelPair{"event": {}, "state": {}, "semantics": {}}
	for _, t := range append(append([]string(nil), knownTypes...), otherType) {
		m["event"][t] = &dto.LabelPair{Name: stringPtr("event"), Value: stringPtr(t)}
	}
	for _, st := range clusterStates {
		m["state"][st] = &dto.LabelPair{Name: stringPtr("state"), Value: stringPtr(st)}
	}
	for _, s := range countSemantics {
		m["semantics"][s] = &dto.LabelPair{Name: stringPtr("semantics"), Value: stringPtr(s)}
	}
	return m
}()

func stringPtr(s string) *string { return &s }

// extraPair returns the label pair of d's extra label with value v: a shared
// one when v is of a fixed vocabulary, else a new one.
func (d *seriesDesc) extraPair(v string) *dto.LabelPair {
	if p, ok := sharedPairs[d.extra][v]; ok {
		return p
	}
	return newPair(&d.extra, v)
}

// newPair is apart from extraPair so that only a new pair moves its value
// to the heap (taking &v in extraPair itself did it for every call).
func newPair(name *string, v string) *dto.LabelPair {
	return &dto.LabelPair{Name: name, Value: &v}
}

// labels returns the sorted label pairs of a series of d: the node's pairs
// and, when d has an extra label, its pair with value extra.
func (d *seriesDesc) labels(node []*dto.LabelPair, extra string) []*dto.LabelPair {
	if d.extra == "" {
		return node // shared, never modified
	}
	out := make([]*dto.LabelPair, 0, len(node)+1)
	out = append(out, node[:d.extraAt]...)
	out = append(out, d.extraPair(extra))
	return append(out, node[d.extraAt:]...)
}

// nodeGauge and nodeCounter are a gauge and a counter of a node.
type nodeGauge struct {
	desc   *prometheus.Desc
	labels []*dto.LabelPair
	value  float64
	gauge  dto.Gauge
}

func (g *nodeGauge) Desc() *prometheus.Desc { return g.desc }

func (g *nodeGauge) Write(m *dto.Metric) error {
	m.Label, m.Gauge = g.labels, &g.gauge
	return nil
}

type nodeCounter struct {
	desc    *prometheus.Desc
	labels  []*dto.LabelPair
	value   float64
	counter dto.Counter
}

func (c *nodeCounter) Desc() *prometheus.Desc { return c.desc }

func (c *nodeCounter) Write(m *dto.Metric) error {
	m.Label, m.Counter = c.labels, &c.counter
	return nil
}

// gauge sends a gauge of the node; extra is the value of d's extra label
// (ignored when d has none).
func (v *nodeView) gauge(ch chan<- prometheus.Metric, d *seriesDesc, value float64, extra string) {
	g := &nodeGauge{desc: d.Desc, labels: d.labels(v.pairs, extra), value: value}
	g.gauge.Value = &g.value
	ch <- g
}

// counter sends a counter of the node, like gauge, with the node's created
// timestamp (when counting began): a Prometheus that ingests created
// timestamps sees a new series, such as the first NODE_DOWN report of a
// node pair, start from 0. The timestamp is shared by the node's series.
func (v *nodeView) counter(ch chan<- prometheus.Metric, d *seriesDesc, value float64, extra string) {
	c := &nodeCounter{desc: d.Desc, labels: d.labels(v.pairs, extra), value: value}
	c.counter.Value = &c.value
	c.counter.CreatedTimestamp = v.created
	ch <- c
}

// nodeHistogram is a node's duration histogram of one event type.
type nodeHistogram struct {
	desc       *prometheus.Desc
	labels     []*dto.LabelPair
	count      uint64
	sum        float64
	hist       dto.Histogram
	buckets    [len(tracker.DurationBuckets)]dto.Bucket
	bucketPtrs [len(tracker.DurationBuckets)]*dto.Bucket
	cumulative [len(tracker.DurationBuckets)]uint64
}

func (h *nodeHistogram) Desc() *prometheus.Desc { return h.desc }

func (h *nodeHistogram) Write(m *dto.Metric) error {
	m.Label, m.Histogram = h.labels, &h.hist
	return nil
}

// histogram sends the duration histogram of event type t.
func (v *nodeView) histogram(ch chan<- prometheus.Metric, d *seriesDesc, dh *tracker.Histogram, t string) {
	h := &nodeHistogram{desc: d.Desc, labels: d.labels(v.pairs, t), count: dh.Count, sum: dh.Sum}
	var acc uint64
	for i := range tracker.DurationBuckets {
		if i < len(dh.Buckets) {
			acc += dh.Buckets[i]
		}
		h.cumulative[i] = acc
		h.buckets[i].UpperBound, h.buckets[i].CumulativeCount = &tracker.DurationBuckets[i], &h.cumulative[i]
		h.bucketPtrs[i] = &h.buckets[i]
	}
	h.hist.SampleCount, h.hist.SampleSum, h.hist.Bucket = &h.count, &h.sum, h.bucketPtrs[:]
	h.hist.CreatedTimestamp = v.created
	ch <- h
}
