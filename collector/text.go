package collector

import (
	"context"

	"github.com/prometheus/common/expfmt"

	"github.com/indexima-exporter/indexima_exporter/poller"
)

// The text exposition of /metrics, kept between scrapes. In a steady state
// most series of a node are the same from one scrape to the next: a node
// with a new event changes the counter, latest time and histogram of that
// type, its cursor and reported count; its tables, indexes, cluster state
// and the histograms of the other types stay. client_golang's text
// encoder (expfmt) was most of what a scrape cost beyond its polls (label
// values escaped, names checked, floats formatted: docs/performance.md).
// So each node's series are written family by family by that encoder as
// soon as the node's poll ends, while the other nodes are polled, and the
// lines are kept with a hash of the series they encode: at the next
// scrape, lines whose series hash the same are sent as they are, and only
// the series whose lines changed are built and encoded (textcache.go).
// A node's families are kept series by series (a line each for a gauge or
// counter, a dozen for a histogram): a new event changes the series of its
// type only.
//
// The answer is the bytes promhttp writes for the families of
// ScrapeGatherer in the same format (TestTextIsWhatPromhttpWrites). Lines
// are kept as text, compressed with the rest of the answer by the
// response's gzip writer: no codec of our own. The protobuf format, a
// name[] filter, /probe and Collect go through the families and promhttp.

// TextFormat tells whether ScrapeText writes format: the text formats
// (Prometheus text, OpenMetrics).
func TextFormat(format expfmt.Format) bool {
	switch format.FormatType() {
	case expfmt.TypeTextPlain, expfmt.TypeOpenMetrics:
		return true
	}
	return false
}

// ScrapeText polls every node within ctx's deadline, as ScrapeGatherer
// does, and returns the scrape in format (TextFormat), or false when
// another scrape is writing its text (two Prometheus servers at the same
// moment): the caller then goes through ScrapeGatherer. The TextScrape is
// the exporter's until its Close.
func (e *Exporter) ScrapeText(ctx context.Context, format expfmt.Format) (*TextScrape, bool) {
	c := &e.text
	if !c.mu.TryLock() {
		return nil, false
	}
	clusters := e.seriesOf(e.p.Current())
	c.prepare(e.logger, format, clusters)
	var nodes []*poller.NodeRuntime
	var at []nodeAt
	for _, cs := range clusters {
		for _, ns := range cs.nodes {
			nodes = append(nodes, ns.n)
			at = append(at, nodeAt{d: cs.d, ns: ns})
		}
	}
	window := e.p.LateWindow()
	stats := newSubStats(len(e.subs))
	results := e.p.PollNodesEach(ctx, nodes, e.want, func(i int, res poller.Result) {
		w := <-c.encoders
		defer func() { c.encoders <- w }()
		e.emitNode(&w.records, &w.keys, at[i].d, at[i].ns, res, window, stats)
		c.encodeNode(w, &c.nodes[i])
		w.records.reset()
	})
	c.scrape.reset()
	e.emitScrape(&c.scrape, clusters, results, stats)
	return &TextScrape{c: c, results: results}, true
}

// nodeAt is a node and the descriptors of its cluster.
type nodeAt struct {
	d  *descs
	ns nodeSeries
}

// TextScrape is a scrape written in a text format: the nodes' lines and
// the scrape's own gauges (the consoles' up, the sub-collectors' duration
// and success). WriteTo writes it; Close hands it back to the exporter.
type TextScrape struct {
	c       *textCache
	results []poller.Result // the polls', for the tests
}

// Close ends the scrape: its lines are kept for the next one.
func (t *TextScrape) Close() {
	if t.c != nil {
		t.c.mu.Unlock()
		t.c = nil
	}
}
