package collector

import (
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/indexima-exporter/indexima_exporter/tally"
)

// The per-node series are const metrics, made at scrape time like those of
// prometheus.MustNewConstMetric and MustNewConstHistogram, but built for a
// scrape of hundreds of nodes with a hundred series each: the node's label
// pairs are made once per node and shared by its series, label values are
// valid by construction (node names come from the configuration, the rest
// is sanitised when learned from events), and the place of the one extra
// label among the sorted pairs is known from the descriptor; the pairs of
// event types and cluster states are shared by every node. A series then
// costs a small allocation or two, and no validation or sort
// (docs/performance.md).

// seriesDesc is a per-node descriptor: the node labels ([cluster,] node),
// then at most one extra label. Its name and help are kept for the
// families a scrape builds without the registry (families.go); fam numbers
// the family among every descriptor of that name.
type seriesDesc struct {
	*prometheus.Desc
	name, help string
	fam        int
	extra      string // name of the extra label; "" when there is none
	extraAt    int    // index of the extra label among the sorted label pairs
	// shared are the pairs of the extra label's fixed vocabulary (nil: none).
	shared map[string]*dto.LabelPair
}

func newSeriesDesc(name, help string, nodeLabels []string, extra string) *seriesDesc {
	labels := append([]string(nil), nodeLabels...)
	d := &seriesDesc{name: name, help: help, fam: familyIndex(name), extra: extra, shared: sharedPairs[extra]}
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

// scrapeDesc is the descriptor of a gauge of the scrape rather than of a
// node (the console's up, each sub-collector's duration and success).
type scrapeDesc struct {
	*prometheus.Desc
	name, help string
	fam        int
	labels     []string // label names, sorted
}

func newScrapeDesc(name, help string, labels []string) *scrapeDesc {
	return &scrapeDesc{Desc: prometheus.NewDesc(name, help, labels, nil), name: name, help: help,
		fam: familyIndex(name), labels: labels}
}

// familyIndex numbers metric names in the order they are first described,
// so that a scrape finds a family by index rather than by name; the
// descriptors of every configuration (with or without the cluster label)
// share the numbers of their names.
func familyIndex(name string) int {
	families.mu.Lock()
	defer families.mu.Unlock()
	i, ok := families.index[name]
	if !ok {
		i = len(families.names)
		families.index[name] = i
		families.names = append(families.names, name)
	}
	return i
}

// familiesByName returns the family indexes in the order of their names
// (the order of an exposition's families) into out.
func familiesByName(out []int) []int {
	families.mu.Lock()
	defer families.mu.Unlock()
	out = out[:0]
	for i := range families.names {
		out = append(out, i)
	}
	slices.SortFunc(out, func(a, b int) int { return strings.Compare(families.names[a], families.names[b]) })
	return out
}

var families = struct {
	mu    sync.Mutex
	index map[string]int
	names []string // by index
}{index: map[string]int{}}

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
	if p, ok := d.shared[v]; ok {
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

// nodeHistogram is a node's duration histogram of one event type.
type nodeHistogram struct {
	desc       *prometheus.Desc
	labels     []*dto.LabelPair
	count      uint64
	sum        float64
	hist       dto.Histogram
	buckets    [len(tally.DurationBuckets)]dto.Bucket
	bucketPtrs [len(tally.DurationBuckets)]*dto.Bucket
	cumulative [len(tally.DurationBuckets)]uint64
}

func (h *nodeHistogram) Desc() *prometheus.Desc { return h.desc }

func (h *nodeHistogram) Write(m *dto.Metric) error {
	m.Label, m.Histogram = h.labels, &h.hist
	return nil
}

// fill sets h to the cumulative buckets, count and sum of dh, with the
// created timestamp created.
func (h *nodeHistogram) fill(dh *tally.Histogram, created *timestamppb.Timestamp) {
	h.count, h.sum = dh.Count, dh.Sum
	var acc uint64
	for i := range tally.DurationBuckets {
		if i < len(dh.Buckets) {
			acc += dh.Buckets[i]
		}
		h.cumulative[i] = acc
		h.buckets[i].UpperBound, h.buckets[i].CumulativeCount = &tally.DurationBuckets[i], &h.cumulative[i]
		h.bucketPtrs[i] = &h.buckets[i]
	}
	h.hist.SampleCount, h.hist.SampleSum, h.hist.Bucket = &h.count, &h.sum, h.bucketPtrs[:]
	h.hist.CreatedTimestamp = created
}
