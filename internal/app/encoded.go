package app

import (
	"context"
	"net/http"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/indexima-exporter/indexima_exporter/collector"
	"github.com/indexima-exporter/indexima_exporter/internal/freelist"
	"github.com/indexima-exporter/indexima_exporter/internal/gzchunk"
)

// encodedMetrics serves /metrics from the nodes' encoded families
// (collector.ScrapeEncoded) when the scraper asks for a text format with
// gzip and no name[] filter, which is what Prometheus asks: the nodes'
// lines that did not change since the scrape before go out as the bytes
// kept from it. The answer is what promhttp writes for the same families
// (collector's TestEncodedIsWhatPromhttpWrites; over HTTP,
// TestOpenMetricsWhenAsked); any other request goes to promhttp.
type encodedMetrics struct {
	exporter *collector.Exporter
	// before and after are gathered around the scrape, as inOrder does:
	// the API call metrics after, so that they show this scrape's calls.
	before, after prometheus.Gatherer
	saved         func() // the state store's save, before the answer
	logger        log.Logger
}

// format returns the text format req asks for, if encodedMetrics serves
// req (see encodedMetrics).
func (m *encodedMetrics) format(req *http.Request) (expfmt.Format, bool) {
	if m == nil || !acceptsGzip(req.Header.Values("Accept-Encoding")) || len(req.URL.Query()["name[]"]) > 0 {
		return "", false
	}
	f := expfmt.NegotiateAccept(req.Header, expfmt.DefaultOpenMetricsAcceptedFormats()...)
	return f, collector.Encodable(f)
}

// serve polls the nodes within ctx's deadline and writes the answer in
// format, compressed.
func (m *encodedMetrics) serve(ctx context.Context, w http.ResponseWriter, format expfmt.Format) {
	var others []*dto.MetricFamily
	gather := func(g prometheus.Gatherer) {
		mfs, err := g.Gather()
		if err != nil {
			level.Error(m.logger).Log("msg", "error serving metrics", "err", "error gathering metrics: "+err.Error())
		}
		others = append(others, mfs...)
	}
	gather(m.before)
	enc := m.exporter.ScrapeEncoded(ctx, format)
	m.saved()
	gather(m.after)

	h := w.Header()
	h.Add("Vary", "Accept")
	h.Set("Content-Type", string(format))
	h.Set("Content-Encoding", "gzip") // before the status: fastGzip leaves the body alone
	comp := compressors.Get()
	defer compressors.Put(comp)
	if err := collector.WriteEncoded(w, format, enc, others, comp); err != nil {
		// A scraper gone away, or a family not encoded (the rest is served).
		level.Error(m.logger).Log("msg", "error serving metrics", "err", err)
	}
}

// compressors keeps idle gzchunk compressors (a flate writer each, hundreds
// of KiB) for the next answers.
var compressors = freelist.New(2, gzchunk.NewCompressor)
