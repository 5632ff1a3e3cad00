// Package collector turns the cluster's events into Prometheus metrics. It
// knows Prometheus and the meaning of events; it knows nothing of HTTP (it
// calls the console through apiclient).
//
// CONTRACT FILE: New, Options, Cluster, Node, SetClusters, RegisterFlags and
// NewAPIObserver are what main.go codes against.
package collector

import (
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
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
	Concurrency    int             // nodes polled at once; default 32
	MaxLabelValues int             // per node and label (tables, indexes, down nodes); default 500
	MaxEventTypes  int             // distinct unknown event type names before OTHER; default 32
	InfoRefresh    time.Duration   // refresh interval of version and columns; default 10m
	StateFile      string          // where cursors are saved ("" = none)
}

// Exporter is the prometheus.Collector of the whole exporter.
type Exporter struct {
	opts Options
}

// New returns an exporter with no clusters yet.
func New(opts Options) (*Exporter, error) { return &Exporter{opts: opts}, nil }

// SetClusters applies a (re)loaded configuration. Nodes that stay keep their
// cursors and state; removed nodes are forgotten, so their series vanish.
func (e *Exporter) SetClusters(clusters []Cluster) {}

// Describe implements prometheus.Collector.
func (e *Exporter) Describe(ch chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {}

// RegisterFlags adds --collector.NAME / --no-collector.NAME for every
// sub-collector to app; the returned function gives the switches after parsing.
func RegisterFlags(app *kingpin.Application) func() map[string]bool {
	return func() map[string]bool { return nil }
}

// NewAPIObserver registers the exporter's own API metrics on reg
// (indexima_exporter_api_requests_total, ..._api_request_duration_seconds,
// indexima_exporter_logins_total) and returns the apiclient hook feeding them.
func NewAPIObserver(reg prometheus.Registerer) apiclient.Observer { return nil }
