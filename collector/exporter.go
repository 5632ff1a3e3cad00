package collector

import (
	"context"
	"sync"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/indexima-exporter/indexima_exporter/poller"
)

// Options of the exporter.
type Options struct {
	Logger  log.Logger
	Enabled map[string]bool // sub-collector switches, from RegisterFlags
}

// Exporter is the prometheus.Collector of the whole exporter.
type Exporter struct {
	p      *poller.Poller
	logger log.Logger
	subs   []namedCollector
	want   poller.InfoCalls // the info calls the enabled sub-collectors read

	// sinks keeps the families of the latest answers that went through
	// them (ScrapeGatherer), emptied, for the next such scrape: a pool, so
	// that the runtime takes them back when no scrape has needed them for
	// two collections (families.go).
	sinks sync.Pool
	// text is the nodes' lines of the latest /metrics answer in a text
	// format, for the next scrape (text.go).
	text textCache

	mu     sync.Mutex
	set    *poller.Set // the configuration clusters was made for
	series []*clusterSeries
}

// clusterSeries is one configured cluster as the exposition sees it: its
// descriptors and its nodes' labels.
type clusterSeries struct {
	name  string
	d     *descs
	nodes []nodeSeries
}

// nodeSeries is one configured node and its labels.
type nodeSeries struct {
	n      *poller.NodeRuntime
	labels []string         // values of the node labels: [cluster,] node
	pairs  []*dto.LabelPair // the same as label pairs, shared by the node's series
}

// New returns the exporter of the nodes p polls. Unknown names in
// opts.Enabled are an error.
func New(p *poller.Poller, opts Options) (*Exporter, error) {
	if opts.Logger == nil {
		opts.Logger = log.NewNopLogger()
	}
	subs, err := enabledCollectors(opts.Enabled)
	if err != nil {
		return nil, err
	}
	e := &Exporter{p: p, logger: opts.Logger, subs: subs}
	for _, sc := range subs {
		switch sc.name {
		case "version":
			e.want.Version = true
		case "columns":
			e.want.Columns = true
		}
	}
	return e, nil
}

// seriesOf returns the clusters of set with their descriptors and labels,
// made once per configuration.
func (e *Exporter) seriesOf(set *poller.Set) []*clusterSeries {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.set == set {
		return e.series
	}
	out := make([]*clusterSeries, 0, len(set.Clusters))
	for _, c := range set.Clusters {
		cs := &clusterSeries{name: c.Name, d: newDescs(c.Name != "")}
		for _, n := range c.Nodes {
			name := n.Name()
			labels, names := []string{name}, []string{"node"}
			if c.Name != "" {
				labels, names = []string{c.Name, name}, []string{"cluster", "node"}
			}
			cs.nodes = append(cs.nodes, nodeSeries{n: n, labels: labels, pairs: labelPairs(names, labels)})
		}
		out = append(out, cs)
	}
	e.set, e.series = set, out
	return out
}

// Describe implements prometheus.Collector. It sends nothing: the exporter
// is an unchecked collector, because its series carry a cluster label or not
// depending on the configuration, which a reload can change after
// registration.
func (e *Exporter) Describe(ch chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector: it polls every node (shared with
// concurrent scrapes) within poller.DefaultScrapeBudget and emits their
// metrics. A scrape that knows its deadline uses Scrape instead.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), poller.DefaultScrapeBudget)
	defer cancel()
	e.Scrape(ctx).Collect(ch)
}

// Scrape returns a collector of every node whose polls end by ctx's
// deadline (the scrape's: Prometheus' scrape timeout less an offset): a node
// not done by then is down for that scrape, the others are served on time.
func (e *Exporter) Scrape(ctx context.Context) prometheus.Collector {
	return collectorFunc(func(ch chan<- prometheus.Metric) {
		e.collect(ctx, chanSink(ch), e.seriesOf(e.p.Current()))
	})
}

// NodeCollector returns a collector of a single node (for a /probe
// endpoint) whose poll ends by ctx's deadline: cluster is the cluster name
// ("" for the unnamed one), target the node's name or host:port. Polls are
// shared with the main collector.
func (e *Exporter) NodeCollector(ctx context.Context, cluster, target string) (prometheus.Collector, bool) {
	set := e.p.Current()
	ci, ni, ok := set.Find(cluster, target)
	if !ok {
		return nil, false
	}
	c := e.seriesOf(set)[ci]
	one := &clusterSeries{name: c.name, d: c.d, nodes: []nodeSeries{c.nodes[ni]}}
	return collectorFunc(func(ch chan<- prometheus.Metric) {
		e.collect(ctx, chanSink(ch), []*clusterSeries{one})
	}), true
}

// collectorFunc is an unchecked prometheus.Collector made of a function.
type collectorFunc func(chan<- prometheus.Metric)

func (f collectorFunc) Describe(chan<- *prometheus.Desc)    {}
func (f collectorFunc) Collect(ch chan<- prometheus.Metric) { f(ch) }
