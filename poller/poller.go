package poller

import (
	"sync"
	"time"

	"github.com/go-kit/log"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
	"github.com/indexima-exporter/indexima_exporter/tally"
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
	// Number is the node's number in its cluster, as NODE_DOWN comments
	// name it; nil when not configured.
	Number *int
}

// Options of the poller; zero values get defaults in New.
type Options struct {
	Logger         log.Logger
	Concurrency    int           // nodes polled at once; default DefaultConcurrency
	MaxLabelValues int           // per node and label (tables, indexes, down nodes); default 500
	MaxEventTypes  int           // distinct unknown event type names before OTHER, per node; default 32
	InfoRefresh    time.Duration // refresh interval of version and columns; default 10m
	// LateWindow, LookBack and LookBackCalls are the counting engine's
	// (tracker.Options): how late an event may become visible and still be
	// counted, and how far first contact reads back to learn the state.
	LateWindow    time.Duration
	LookBack      time.Duration
	LookBackCalls int
	// Events, when set, is given each poll's counted events before the
	// poll is committed (the event log).
	Events EventWriter
}

// DefaultConcurrency is the default bound of the nodes polled at once. A
// scrape takes as long as the slowest node's own calls only while every
// node gets a slot at once, so the bound is high: the calls are small and
// mostly waiting, and the bound is there against a configuration of
// thousands of nodes, not for the usual cluster (a thousand slow nodes are
// polled in one round; docs/scaling.md and docs/performance.md give what
// each bound costs).
const DefaultConcurrency = 1024

// Poller polls the configured nodes and keeps each node's committed state.
type Poller struct {
	opts   Options
	logger log.Logger
	engine tracker.Options // the counting engine's options (its Logger set per node)
	sem    chan struct{}   // bounds the polls running at once

	mu  sync.RWMutex
	set *Set
}

// Set is the configured clusters and their nodes as one SetClusters made
// them; it is never modified (a reload makes a new one), so a reader may
// key what it derives from the configuration (labels, descriptors) by it.
type Set struct {
	Clusters []ClusterNodes
}

// ClusterNodes is one configured cluster of a Set.
type ClusterNodes struct {
	Name  string // "" for the single unnamed cluster
	Nodes []*NodeRuntime
	// byNumber is the configured name of each node given a number.
	byNumber nodeNumbers
}

// DownNode names the node a NODE_DOWN comment (the engine's down-node key)
// designates in this configuration: the configured name of the cluster's
// node of that number, or the key itself when no node has it (or it is
// not a number). The engine names a report so when it first reads it
// (tracker.Options.DownNodeName), and the report keeps that name.
func (c ClusterNodes) DownNode(key string) string { return c.byNumber.name(key) }

// nodeNumbers is the configured name of each node of a cluster given a
// number; never modified once made (the engine of a poll under way may
// read it while a reload makes the next one).
type nodeNumbers map[int]string

func (m nodeNumbers) name(key string) string {
	if len(m) == 0 {
		return key
	}
	n, ok := tally.NodeNumber(key)
	if !ok {
		return key
	}
	if name, ok := m[n]; ok {
		return name
	}
	return key
}

// namer is the engine's DownNodeName for a cluster of these numbers: nil
// when no node has one (the key is the name), so that most polls pass no
// function.
func (m nodeNumbers) namer() tracker.DownNodeNamer {
	if len(m) == 0 {
		return nil
	}
	return m.name
}

// New returns a poller with no clusters yet.
func New(opts Options) *Poller {
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
	// The engine hands out every counted event for the event log, else
	// only what the recent events of the status page keep.
	handOut := RecentEvents
	if opts.Events != nil {
		handOut = tracker.HandOutAll
	}
	return &Poller{
		opts:   opts,
		logger: opts.Logger,
		engine: tracker.Options{Window: opts.LateWindow, LookBack: opts.LookBack, LookBackCalls: opts.LookBackCalls,
			Limits: tally.Limits{MaxNames: opts.MaxLabelValues, MaxEventTypes: opts.MaxEventTypes}, HandOut: handOut},
		sem: make(chan struct{}, opts.Concurrency),
		set: &Set{},
	}
}

// SetClusters applies a (re)loaded configuration. Nodes that stay keep their
// cursors and state; removed nodes are forgotten, so their series vanish.
// A node stays when its cluster name and target (host:port) stay.
func (p *Poller) SetClusters(clusters []Cluster) {
	p.mu.Lock()
	defer p.mu.Unlock()
	old := map[string]*NodeRuntime{}
	for _, c := range p.set.Clusters {
		for _, n := range c.Nodes {
			old[nodeID(c.Name, n.target)] = n
		}
	}
	next := &Set{}
	for _, c := range clusters {
		cn := ClusterNodes{Name: c.Name}
		for _, nd := range c.Nodes {
			if nd.Number != nil {
				if cn.byNumber == nil {
					cn.byNumber = nodeNumbers{}
				}
				cn.byNumber[*nd.Number] = nodeName(nd)
			}
		}
		downName := cn.byNumber.namer()
		for _, nd := range c.Nodes {
			name := nodeName(nd)
			var api nodeAPI
			if c.Client != nil {
				api = c.Client
			}
			nr := old[nodeID(c.Name, nd.Target)]
			if nr == nil {
				nr = &NodeRuntime{p: p, cluster: c.Name, target: nd.Target, state: &tracker.State{}}
			}
			delete(old, nodeID(c.Name, nd.Target)) // a node listed twice gets a fresh runtime the second time
			nr.mu.Lock()
			nr.name, nr.api, nr.downName = name, api, downName
			nr.mu.Unlock()
			cn.Nodes = append(cn.Nodes, nr)
		}
		next.Clusters = append(next.Clusters, cn)
	}
	p.set = next
}

// nodeName is a node's configured name, host:port by default.
func nodeName(nd Node) string {
	if nd.Name == "" {
		return nd.Target.String()
	}
	return nd.Name
}

// Current returns the configured clusters and nodes.
func (p *Poller) Current() *Set {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.set
}

// Find returns the place in s of the node a /probe names: cluster is the
// cluster's name ("" for the unnamed one), target the node's name or
// host:port. By name first, so that the usual probe (by name, or by
// host:port, the default name) formats no address.
func (s *Set) Find(cluster, target string) (ci, ni int, ok bool) {
	for ci, c := range s.Clusters {
		if c.Name != cluster {
			continue
		}
		for ni, n := range c.Nodes {
			if n.Name() == target {
				return ci, ni, true
			}
		}
		for ni, n := range c.Nodes {
			if n.target.String() == target {
				return ci, ni, true
			}
		}
	}
	return 0, 0, false
}

// LateWindow is the engine's late window, defaults applied.
func (p *Poller) LateWindow() time.Duration {
	if p.engine.Window > 0 {
		return p.engine.Window
	}
	return tracker.DefaultWindow
}

func nodeID(cluster string, target apiclient.Node) string {
	return cluster + "\x00" + target.String()
}
