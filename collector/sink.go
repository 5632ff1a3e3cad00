package collector

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/indexima-exporter/indexima_exporter/tally"
)

// sink receives the series of a scrape. There are two: chanSink sends them
// as prometheus.Metric to a collector's channel (Collect, /probe), and
// familySink writes them straight into metric families (/metrics: see
// families.go), and a node's series go to a recordSink for /metrics in a
// text format (records.go). The sub-collectors do not know which one they
// feed.
type sink interface {
	nodeSink
	// scrapeGauge is a gauge of the scrape, with values of d's labels.
	scrapeGauge(d *scrapeDesc, value float64, labelValues ...string)
}

// nodeSink receives the series of a node (emitNode): a sink, or the
// records of the text exposition (records.go).
type nodeSink interface {
	// gauge, counter and histogram are series of a node: node is the
	// node's label pairs, extra the value of d's extra label (ignored when
	// d has none), created the counters' created timestamp (may be nil).
	gauge(d *seriesDesc, node []*dto.LabelPair, extra string, value float64)
	counter(d *seriesDesc, node []*dto.LabelPair, extra string, value float64, created *timestamppb.Timestamp)
	histogram(d *seriesDesc, node []*dto.LabelPair, extra string, h *tally.Histogram, created *timestamppb.Timestamp)
}

// chanSink sends each series to a collector's channel.
type chanSink chan<- prometheus.Metric

func (ch chanSink) gauge(d *seriesDesc, node []*dto.LabelPair, extra string, value float64) {
	g := &nodeGauge{desc: d.Desc, labels: d.labels(node, extra), value: value}
	g.gauge.Value = &g.value
	ch <- g
}

func (ch chanSink) counter(d *seriesDesc, node []*dto.LabelPair, extra string, value float64, created *timestamppb.Timestamp) {
	c := &nodeCounter{desc: d.Desc, labels: d.labels(node, extra), value: value}
	c.counter.Value = &c.value
	c.counter.CreatedTimestamp = created
	ch <- c
}

func (ch chanSink) histogram(d *seriesDesc, node []*dto.LabelPair, extra string, dh *tally.Histogram, created *timestamppb.Timestamp) {
	h := &nodeHistogram{desc: d.Desc, labels: d.labels(node, extra)}
	h.fill(dh, created)
	ch <- h
}

func (ch chanSink) scrapeGauge(d *scrapeDesc, value float64, labelValues ...string) {
	ch <- prometheus.MustNewConstMetric(d.Desc, prometheus.GaugeValue, value, labelValues...)
}

// gauge emits a gauge of the node; extra is the value of d's extra label
// (ignored when d has none).
func (v *nodeView) gauge(d *seriesDesc, value float64, extra string) {
	v.out.gauge(d, v.pairs, extra, value)
}

// counter emits a counter of the node, like gauge, with the node's created
// timestamp (when counting began): a Prometheus that ingests created
// timestamps sees a new series, such as the first NODE_DOWN report of a
// node pair, start from 0. The timestamp is shared by the node's series.
func (v *nodeView) counter(d *seriesDesc, value float64, extra string) {
	v.out.counter(d, v.pairs, extra, value, v.created)
}

// histogram emits the duration histogram of event type t.
func (v *nodeView) histogram(d *seriesDesc, h *tally.Histogram, t string) {
	v.out.histogram(d, v.pairs, t, h, v.created)
}
