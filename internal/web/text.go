package web

import (
	"context"
	"net/http"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/indexima-exporter/indexima_exporter/collector"
)

// TextAnswer is a /metrics answer in a text format: the nodes' lines kept
// between scrapes (collector.ScrapeText) and the families gathered around
// them (the exporter's own metrics, the API calls), Err the error of
// gathering those (what was gathered is served, as promhttp does with
// promhttp.ContinueOnError).
type TextAnswer struct {
	Nodes  *collector.TextScrape
	Others []*dto.MetricFamily
	Err    error
}

// serveText answers req through text when req asks for a text format
// without a name[] filter, and tells whether it did. The format is
// negotiated as promhttp negotiates it (expositionOpts), and the answer is
// the bytes promhttp writes for the same families.
func serveText(ctx context.Context, w http.ResponseWriter, req *http.Request,
	text func(context.Context, expfmt.Format) (TextAnswer, bool), logger log.Logger) bool {
	if req.URL != nil && len(req.URL.Query()["name[]"]) > 0 {
		return false
	}
	format := expfmt.NegotiateAccept(req.Header, expfmt.DefaultOpenMetricsAcceptedFormats()...)
	if !collector.TextFormat(format) {
		return false
	}
	a, ok := text(ctx, format)
	if !ok {
		return false
	}
	defer a.Nodes.Close()
	if a.Err != nil {
		level.Error(logger).Log("msg", "error serving metrics", "err", "error gathering metrics: "+a.Err.Error())
	}
	h := w.Header()
	h.Add("Vary", "Accept")
	h.Set("Content-Type", string(format))
	if err := a.Nodes.WriteTo(w, a.Others); err != nil {
		// A scraper gone away, or a family not encoded (the rest is served).
		level.Error(logger).Log("msg", "error serving metrics", "err", err)
	}
	return true
}
