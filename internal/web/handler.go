// Package web serves the exporter's HTTP endpoints: /metrics within the
// scrape's deadline, /probe, the health and readiness checks, /-/reload,
// /config and the landing page. The status page (package statuspage) and
// the target discovery (package discovery) are handed to it as handlers.
package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"

	"github.com/indexima-exporter/indexima_exporter/config"
)

// Configs is the configuration in force and its reload.
type Configs interface {
	// Config is the configuration in force, nil before the first load.
	Config() *config.Config
	// Reload loads the configuration again; on error the previous one
	// stays in force.
	Reload() error
}

// Options are what NewHandler serves.
type Options struct {
	MetricsPath string
	// ExternalURL is --web.external-url without a trailing slash, or "":
	// the landing page's links start with it.
	ExternalURL   string
	TimeoutOffset time.Duration // --scrape.timeout-offset (scrapeContext)
	// Registerer receives the metrics of the /metrics handler itself.
	Registerer prometheus.Registerer
	// Gather gives what /metrics serves, polled within the scrape's
	// deadline (its context); its done is called once the answer is
	// written.
	Gather func(context.Context) prometheus.TransactionalGatherer
	// Text, when set, serves /metrics asked in a text format without a
	// name[] filter (text.go); false: it cannot now, and Gather serves.
	Text   func(context.Context, expfmt.Format) (TextAnswer, bool)
	Probe  http.Handler // /probe
	Status http.Handler // /status
	Events http.Handler // /events
	SD     http.Handler // /sd
	Config Configs
	Logger log.Logger
}

// NewHandler routes the exporter's HTTP endpoints.
func NewHandler(o Options) (http.Handler, error) {
	r, logger, metricsPath := o.Config, o.Logger, o.MetricsPath
	mux := http.NewServeMux()
	mux.Handle("/probe", fastGzip(o.Probe))
	mux.Handle("/sd", o.SD)
	mux.Handle("/status", o.Status)
	mux.Handle("/events", o.Events)
	opts := expositionOpts(logger)
	metrics := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ctx, cancel := scrapeContext(req, o.TimeoutOffset)
		defer cancel()
		if o.Text != nil && serveText(ctx, w, req, o.Text, logger) {
			return
		}
		promhttp.HandlerForTransactional(o.Gather(ctx), opts).ServeHTTP(w, req)
	})
	mux.Handle(metricsPath, promhttp.InstrumentMetricHandler(o.Registerer, fastGzip(metrics)))
	mux.HandleFunc("/-/healthy", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "Healthy.\n") // a client gone away: nothing to do
	})
	mux.HandleFunc("/-/ready", func(w http.ResponseWriter, _ *http.Request) {
		if r.Config() == nil {
			http.Error(w, "Not ready: no configuration loaded yet.", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "Ready.\n") // a client gone away: nothing to do
	})
	mux.HandleFunc("/-/reload", func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost && req.Method != http.MethodPut {
			w.Header().Set("Allow", "POST, PUT")
			http.Error(w, "Use POST to reload the configuration.", http.StatusMethodNotAllowed)
			return
		}
		if err := r.Reload(); err != nil {
			// Config errors never hold secrets (see package config).
			http.Error(w, "Configuration refused, the previous one stays in force: "+err.Error(), http.StatusInternalServerError)
			return
		}
		cfg := r.Config()
		fmt.Fprintf(w, "Configuration reloaded: %d cluster(s), %d node(s).\n", len(cfg.Clusters), cfg.NodeCount())
	})
	mux.HandleFunc("/config", func(w http.ResponseWriter, _ *http.Request) {
		cfg := r.Config()
		if cfg == nil {
			http.Error(w, "No configuration loaded yet.", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, cfg.String()) // secrets marshal as <secret>
	})
	landing, err := landingPage(metricsPath, o.ExternalURL, r)
	if err != nil {
		return nil, err
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/" {
			http.NotFound(w, req)
			return
		}
		landing.ServeHTTP(w, req)
	})
	return mux, nil
}

// expositionOpts are the options of every exposition handler, /metrics and
// each /probe: errors logged, whatever could be gathered served, no
// compression of its own (newHandler wraps both in fastGzip), and the format
// the scraper asks for, negotiated by promhttp over prometheus/common's
// stable formats (expfmt.DefaultOpenMetricsAcceptedFormats): OpenMetrics 1.0
// or 0.0.1 (ending in "# EOF", the first choice of Prometheus 2.x and 3),
// protobuf, text 1.0.0 (Prometheus 3's own), or text 0.0.4 when the Accept
// header asks for nothing else. The answer carries the escaping= scheme of
// the Accept clause it matched (underscores when it names none); the
// exporter's names are all valid legacy names, which every scheme leaves
// as they are.
func expositionOpts(logger log.Logger) promhttp.HandlerOpts {
	return promhttp.HandlerOpts{
		ErrorLog:           promLogger{logger},
		ErrorHandling:      promhttp.ContinueOnError,
		DisableCompression: true,
		EnableOpenMetrics:  true,
	}
}

// promLogger hands promhttp's errors (a collector failing) to go-kit.
type promLogger struct{ logger log.Logger }

func (l promLogger) Println(v ...any) {
	level.Error(l.logger).Log("msg", "error serving metrics", "err", fmt.Sprint(v...))
}
