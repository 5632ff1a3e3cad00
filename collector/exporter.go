// Package collector polls the configured nodes and exposes what was
// counted as Prometheus metrics. Per node it runs the polls (node.go: one
// poll shared by every scrape that arrives while it runs, within the
// scrape's deadline, deadline.go), drives the counting engine (tracker)
// through the API client (apiclient, console.go), refreshes slow-changing
// data (version, tables, indexes) and emits the series of each committed
// state (the sub-collectors collector_*.go, series.go, descs.go). The state
// file is the store package's; the HTTP server and flags are internal/app's.
//
// internal/app codes against New, Options, Cluster, Node, SetClusters,
// RegisterFlags and NewAPIObserver.
package collector

import (
	"context"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// Cluster is one configured cluster: a console client and its nodes.
type Cluster struct {
	Name   string // module name; "" for the single unnamed cluster (no cluster label)
	Client *apiclient.Client
	Nodes  []Node
}

// Node is one configured node.
type Node struct {
	Name   string // value of the node label; default host:port
	Target apiclient.Node
}

// Options of the exporter; zero values get defaults in New.
type Options struct {
	Logger         log.Logger
	Enabled        map[string]bool // sub-collector switches, from RegisterFlags
	Concurrency    int             // nodes polled at once; default DefaultConcurrency
	MaxLabelValues int             // per node and label (tables, indexes, down nodes); default 500
	MaxEventTypes  int             // distinct unknown event type names before OTHER, per node; default 32
	InfoRefresh    time.Duration   // refresh interval of version and columns; default 10m
	// LateWindow, LookBack and LookBackCalls are the counting engine's
	// (tracker.Options): how late an event may become visible and still be
	// counted, and how far first contact reads back to learn the state.
	LateWindow    time.Duration
	LookBack      time.Duration
	LookBackCalls int
}

// DefaultConcurrency is the default bound of the nodes polled at once. A
// scrape takes as long as the slowest node's own calls only while every
// node gets a slot at once: with 200 nodes answering in 50 ms, a bound of
// 32 made a scrape 7 rounds of calls (700 ms) instead of one (100 ms). The
// calls are small and mostly waiting, so the bound is there against a
// configuration of thousands of nodes, not for the usual cluster.
const DefaultConcurrency = 256

// Exporter is the prometheus.Collector of the whole exporter.
type Exporter struct {
	opts   Options
	logger log.Logger
	engine tracker.Options // the counting engine's options (its Logger set per node)
	sem    chan struct{}   // bounds the polls running at once
	subs   []namedCollector

	mu       sync.RWMutex
	clusters []*clusterRuntime
}

// clusterRuntime is one configured cluster and its nodes.
type clusterRuntime struct {
	name  string
	d     *descs
	nodes []*nodeRuntime
}

// New returns an exporter with no clusters yet.
func New(opts Options) (*Exporter, error) {
	if opts.Logger == nil {
		opts.Logger = log.NewNopLogger()
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.MaxLabelValues <= 0 {
		opts.MaxLabelValues = 500
	}
	if opts.MaxEventTypes <= 0 {
		opts.MaxEventTypes = 32
	}
	if opts.InfoRefresh <= 0 {
		opts.InfoRefresh = 10 * time.Minute
	}
	subs, err := enabledCollectors(opts.Enabled)
	if err != nil {
		return nil, err
	}
	return &Exporter{
		opts:   opts,
		logger: opts.Logger,
		engine: tracker.Options{Window: opts.LateWindow, LookBack: opts.LookBack, LookBackCalls: opts.LookBackCalls,
			Limits: tracker.Limits{MaxLabelValues: opts.MaxLabelValues, MaxEventTypes: opts.MaxEventTypes}},
		sem:  make(chan struct{}, opts.Concurrency),
		subs: subs,
	}, nil
}

// SetClusters applies a (re)loaded configuration. Nodes that stay keep their
// cursors and state; removed nodes are forgotten, so their series vanish.
// A node stays when its cluster name and target (host:port) stay.
func (e *Exporter) SetClusters(clusters []Cluster) {
	e.mu.Lock()
	defer e.mu.Unlock()
	old := map[string]*nodeRuntime{}
	for _, c := range e.clusters {
		for _, n := range c.nodes {
			old[nodeID(c.name, n.target)] = n
		}
	}
	var next []*clusterRuntime
	for _, c := range clusters {
		d := newDescs(c.Name != "")
		cr := &clusterRuntime{name: c.Name, d: d}
		for _, nd := range c.Nodes {
			name := nd.Name
			if name == "" {
				name = nd.Target.String()
			}
			labels, names := []string{name}, []string{"node"}
			if c.Name != "" {
				labels, names = []string{c.Name, name}, []string{"cluster", "node"}
			}
			var api nodeAPI
			if c.Client != nil {
				api = c.Client
			}
			nr := old[nodeID(c.Name, nd.Target)]
			if nr == nil {
				nr = &nodeRuntime{cluster: c.Name, target: nd.Target, state: &tracker.State{}}
			}
			delete(old, nodeID(c.Name, nd.Target)) // a node listed twice gets a fresh runtime the second time
			nr.mu.Lock()
			nr.name, nr.labels, nr.pairs, nr.d, nr.api = name, labels, labelPairs(names, labels), d, api
			nr.mu.Unlock()
			cr.nodes = append(cr.nodes, nr)
		}
		next = append(next, cr)
	}
	e.clusters = next
}

// lateWindow is the engine's late window, defaults applied.
func (e *Exporter) lateWindow() time.Duration {
	if e.engine.Window > 0 {
		return e.engine.Window
	}
	return tracker.DefaultWindow
}

func nodeID(cluster string, target apiclient.Node) string {
	return cluster + "\x00" + target.String()
}

// Describe implements prometheus.Collector. It sends nothing: the exporter
// is an unchecked collector, because its series carry a cluster label or not
// depending on the configuration, which a reload can change after
// registration.
func (e *Exporter) Describe(ch chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector: it polls every node (shared with
// concurrent scrapes) within DefaultScrapeBudget and emits their metrics.
// A scrape that knows its deadline uses Scrape instead.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultScrapeBudget)
	defer cancel()
	e.Scrape(ctx).Collect(ch)
}

// Scrape returns a collector of every node whose polls end by ctx's
// deadline (the scrape's: Prometheus' scrape timeout less an offset): a node
// not done by then is down for that scrape, the others are served on time.
func (e *Exporter) Scrape(ctx context.Context) prometheus.Collector {
	return collectorFunc(func(ch chan<- prometheus.Metric) {
		e.mu.RLock()
		clusters := e.clusters
		e.mu.RUnlock()
		e.collect(ctx, ch, clusters)
	})
}

// NodeCollector returns a collector of a single node (for a /probe
// endpoint) whose poll ends by ctx's deadline: cluster is the cluster name
// ("" for the unnamed one), target the node's name or host:port. Polls are
// shared with the main collector.
func (e *Exporter) NodeCollector(ctx context.Context, cluster, target string) (prometheus.Collector, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	c, n := e.findNode(cluster, target)
	if n == nil {
		return nil, false
	}
	one := &clusterRuntime{name: c.name, d: c.d, nodes: []*nodeRuntime{n}}
	return collectorFunc(func(ch chan<- prometheus.Metric) {
		e.collect(ctx, ch, []*clusterRuntime{one})
	}), true
}

// findNode returns the node a /probe names and its cluster, nil if none (call with e.mu
// held): by name first, so that the usual probe (by name, or by host:port,
// the default name) formats no address.
func (e *Exporter) findNode(cluster, target string) (*clusterRuntime, *nodeRuntime) {
	for _, c := range e.clusters {
		if c.name != cluster {
			continue
		}
		for _, n := range c.nodes {
			if n.name == target {
				return c, n
			}
		}
		for _, n := range c.nodes {
			if n.target.String() == target {
				return c, n
			}
		}
	}
	return nil, nil
}

// collectorFunc is an unchecked prometheus.Collector made of a function.
type collectorFunc func(chan<- prometheus.Metric)

func (f collectorFunc) Describe(chan<- *prometheus.Desc)    {}
func (f collectorFunc) Collect(ch chan<- prometheus.Metric) { f(ch) }
