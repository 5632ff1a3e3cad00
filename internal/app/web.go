package app

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
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"
)

// newHandler routes the exporter's HTTP endpoints. /metrics serves what
// gather gives for the scrape's deadline (scrapeContext, offset); reg
// receives the metrics of the /metrics handler itself.
func newHandler(reg prometheus.Registerer, gather func(context.Context) prometheus.Gatherer, offset time.Duration, metricsPath string, r *reloader, probe, status http.Handler, logger log.Logger) (http.Handler, error) {
	mux := http.NewServeMux()
	mux.Handle("/probe", fastGzip(probe))
	mux.Handle("/sd", sdHandler(r))
	mux.Handle("/status", status)
	opts := expositionOpts(logger)
	metrics := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ctx, cancel := scrapeContext(req, offset)
		defer cancel()
		promhttp.HandlerFor(gather(ctx), opts).ServeHTTP(w, req)
	})
	mux.Handle(metricsPath, promhttp.InstrumentMetricHandler(reg, fastGzip(metrics)))
	mux.HandleFunc("/-/healthy", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "Healthy.\n")
	})
	mux.HandleFunc("/-/ready", func(w http.ResponseWriter, _ *http.Request) {
		if r.config() == nil {
			http.Error(w, "Not ready: no configuration loaded yet.", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "Ready.\n")
	})
	mux.HandleFunc("/-/reload", func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost && req.Method != http.MethodPut {
			w.Header().Set("Allow", "POST, PUT")
			http.Error(w, "Use POST to reload the configuration.", http.StatusMethodNotAllowed)
			return
		}
		if err := r.reload(); err != nil {
			// Config errors never hold secrets (see package config).
			http.Error(w, "Configuration refused, the previous one stays in force: "+err.Error(), http.StatusInternalServerError)
			return
		}
		cfg := r.config()
		fmt.Fprintf(w, "Configuration reloaded: %d cluster(s), %d node(s).\n", len(cfg.Clusters), cfg.NodeCount())
	})
	mux.HandleFunc("/config", func(w http.ResponseWriter, _ *http.Request) {
		cfg := r.config()
		if cfg == nil {
			http.Error(w, "No configuration loaded yet.", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, cfg.String()) // secrets marshal as <secret>
	})
	landing, err := web.NewLandingPage(web.LandingConfig{
		Name:        "Indexima Exporter",
		Description: "Prometheus exporter for the events of Indexima clusters",
		// Version, revision and build date (from linker flags, or from Go's
		// build information: see buildinfo.go).
		Version: version.Info() + " " + version.BuildContext(),
		Links: []web.LandingLinks{
			{Address: metricsPath, Text: "Metrics"},
			{Address: "/status", Text: "Status", Description: "each node: up or down, its last polls, counted and reported events"},
			{Address: "/-/healthy", Text: "Health", Description: "200 while the exporter runs"},
			{Address: "/-/ready", Text: "Readiness", Description: "200 once a configuration is loaded"},
			{Address: "/config", Text: "Configuration", Description: "the configuration in force, secrets hidden; POST /-/reload or SIGHUP reloads it"},
			{Address: "/probe", Text: "Probe", Description: "one node: /probe?target=<node>&module=<cluster>"},
			{Address: "/sd", Text: "Targets", Description: "the configured nodes as /probe targets, for Prometheus' http_sd_configs"},
		},
	})
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
// the scraper asks for: OpenMetrics 1.0 (ending in "# EOF", the first choice
// of Prometheus 3 and also of 2.x), protobuf, or text 0.0.4 when the Accept
// header asks for nothing else.
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
