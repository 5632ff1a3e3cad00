package collector

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/go-kit/log/level"

	"github.com/indexima-exporter/indexima_exporter/poller"
)

// collect has the poller poll the nodes of clusters within the scrape's
// deadline (ctx), then emits per node the core series and those of every
// enabled sub-collector, from what the polls committed. A node whose poll
// the deadline cut is down for this scrape; the others are served on time.
func (e *Exporter) collect(ctx context.Context, out sink, clusters []*clusterSeries) {
	e.emit(out, clusters, e.poll(ctx, clusters))
}

// poll polls every node of clusters within ctx's deadline and returns
// their results in order.
func (e *Exporter) poll(ctx context.Context, clusters []*clusterSeries) []poller.Result {
	var nodes []*poller.NodeRuntime
	for _, c := range clusters {
		for _, ns := range c.nodes {
			nodes = append(nodes, ns.n)
		}
	}
	return e.p.PollNodes(ctx, nodes, e.want)
}

// emit sends to out the series of the nodes of clusters, from what their
// polls committed and results (this scrape's outcome of each node, in
// order), node after node, then the scrape's gauges.
func (e *Exporter) emit(out sink, clusters []*clusterSeries, results []poller.Result) {
	window := e.p.LateWindow()
	var keys []string // sortedKeys' scratch, one scrape's
	stats := newSubStats(len(e.subs))
	i := 0
	for _, c := range clusters {
		for _, ns := range c.nodes {
			e.emitNode(out, &keys, c.d, ns, results[i], window, stats)
			i++
		}
	}
	e.emitScrape(out, clusters, results, stats)
}

// emitNode sends to out the series of one node: the core series, and those
// of every enabled sub-collector once the node has been contacted. keys is
// sortedKeys' scratch (one per goroutine); stats may be shared.
func (e *Exporter) emitNode(out nodeSink, keys *[]string, d *descs, ns nodeSeries, res poller.Result, window time.Duration, stats *subStats) {
	v := viewOf(out, keys, d, ns, res, window)
	emitCore(v)
	if !v.st.Contacted {
		return
	}
	for j, sc := range e.subs {
		start := time.Now()
		if err := sc.c.update(v); err != nil {
			stats.failed[j].Store(true)
			level.Debug(e.logger).Log("msg", "collector incomplete for node", "collector", sc.name, "node", v.labels[len(v.labels)-1], "err", err)
		}
		stats.spent[j].Add(int64(time.Since(start)))
	}
}

// emitScrape sends to out the gauges of the scrape as a whole: each
// console's up, each sub-collector's duration and success.
func (e *Exporter) emitScrape(out sink, clusters []*clusterSeries, results []poller.Result, stats *subStats) {
	i := 0
	for _, c := range clusters {
		// The console is up for a scrape when it answered some call and
		// refused no login or token: credentials are the console's, not a
		// node's, so a refusal in the middle of a scrape (tokens revoked
		// while the nodes are polled) is the console's failure for every
		// node, and no node is taken for unreachable (the alerts' rule).
		answered, refused := false, false
		for _, res := range results[i : i+len(c.nodes)] {
			answered = answered || res.ConsoleAnswered
			refused = refused || res.Reason == poller.ReasonCredentials
		}
		i += len(c.nodes)
		if len(c.nodes) > 0 {
			var lv []string
			if c.d.withCluster {
				lv = []string{c.name}
			}
			out.scrapeGauge(c.d.consoleUp, boolValue(answered && !refused), lv...)
		}
	}
	for j, sc := range e.subs {
		out.scrapeGauge(collectorDurationDesc, time.Duration(stats.spent[j].Load()).Seconds(), sc.name)
		out.scrapeGauge(collectorSuccessDesc, boolValue(!stats.failed[j].Load()), sc.name)
	}
}

// subStats is what the sub-collectors spent and whether one failed, over a
// scrape's nodes (which may be emitted concurrently).
type subStats struct {
	spent  []atomic.Int64 // nanoseconds
	failed []atomic.Bool
}

func newSubStats(n int) *subStats {
	return &subStats{spent: make([]atomic.Int64, n), failed: make([]atomic.Bool, n)}
}

// emitCore emits the series every configured node has: up, the duration of
// its latest poll, its failed polls by reason and the dropped label values.
func emitCore(v *nodeView) {
	v.gauge(v.d.up, boolValue(v.res.Err == nil), "")
	v.gauge(v.d.pollDuration, v.lastPoll.Seconds(), "")
	// A reason's series appears at its first failure: seven series at 0
	// per node would be most of the cost of this counter.
	for _, reason := range poller.FailureReasons {
		if c, ok := v.failures[reason]; ok {
			v.counter(v.d.pollFailures, float64(c), reason)
		}
	}
	for _, b := range boundedLabels {
		if c, ok := v.st.Dropped[b.vocab]; ok {
			v.counter(v.d.dropped, float64(c), b.label)
		}
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
