package web

import (
	"html"
	"net"
	"net/http"
	"net/url"
	"strconv"

	"github.com/prometheus/common/version"
	toolkitweb "github.com/prometheus/exporter-toolkit/web"

	"github.com/indexima-exporter/indexima_exporter/config"
)

// landingPage serves the page of /: the exporter's name and version, then a
// link to each endpoint with what it serves. It is rendered at each request:
// the Probe link is a working example, the first node of the configuration
// in force (reloads change it).
//
// exporter-toolkit renders it with text/template, which escapes nothing:
// every text is escaped here, or a description such as
// "/probe?target=<node>" would reach the browser as tags and be shown
// without them. Its LandingConfig also shows links to /debug/pprof when
// Profiling is left empty; the exporter serves no pprof, so it is "false".
//
// The links start with externalURL (--web.external-url, no trailing slash)
// when it is set, as the toolkit's RoutePrefix, else with "/".
func landingPage(metricsPath, externalURL string, configs Configs) (http.HandlerFunc, error) {
	render := func(cfg *config.Config) (*toolkitweb.LandingPageHandler, error) {
		return toolkitweb.NewLandingPage(landingConfig(metricsPath, externalURL, cfg))
	}
	if _, err := render(nil); err != nil { // the toolkit's templates, once at start
		return nil, err
	}
	return func(w http.ResponseWriter, req *http.Request) {
		h, err := render(configs.Config())
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		// The toolkit's handler answers only a request for its route
		// prefix, here the whole external URL: the request for / is
		// handed to it as one for that prefix.
		r := req.Clone(req.Context())
		r.URL.Path = routePrefix(externalURL)
		h.ServeHTTP(w, r)
	}, nil
}

// routePrefix is the toolkit's RoutePrefix, which its template writes
// before each link unescaped.
func routePrefix(externalURL string) string { return html.EscapeString(externalURL + "/") }

func landingConfig(metricsPath, externalURL string, cfg *config.Config) toolkitweb.LandingConfig {
	link := func(address, text, description string) toolkitweb.LandingLinks {
		return toolkitweb.LandingLinks{Address: html.EscapeString(address), Text: html.EscapeString(text), Description: html.EscapeString(description)}
	}
	return toolkitweb.LandingConfig{
		Name:        "Indexima Exporter",
		Description: "Prometheus exporter for the events of Indexima clusters",
		// Version, revision and build date (from linker flags, or from Go's
		// build information: see internal/program/buildinfo.go).
		Version:     html.EscapeString(version.Info() + " " + version.BuildContext()),
		RoutePrefix: routePrefix(externalURL),
		Links: []toolkitweb.LandingLinks{
			link(metricsPath, "Metrics", ""),
			link("/status", "Status", "each node: up or down, its last polls, counted and reported events, its latest events"),
			link("/events", "Events", "the latest counted events of each node, as JSON: /events?cluster=<cluster>&node=<node>&since=<time>"),
			link("/-/healthy", "Health", "200 while the exporter runs"),
			link("/-/ready", "Readiness", "200 once a configuration is loaded"),
			link("/config", "Configuration", "the configuration in force, secrets hidden; POST /-/reload or SIGHUP reloads it"),
			link(probeExample(cfg), "Probe", "one node: /probe?target=<node>&module=<cluster>; this link probes the first node of the configuration"),
			link("/sd", "Targets", "the configured nodes as /probe targets, for Prometheus' http_sd_configs"),
		},
		Profiling: "false",
	}
}

// probeExample is /probe for the first node of cfg, as /sd gives it: its
// host:port as the target, its cluster as the module (none with the
// single-cluster form). Without a configuration, /probe alone.
func probeExample(cfg *config.Config) string {
	if cfg == nil || len(cfg.Clusters) == 0 || len(cfg.Clusters[0].Nodes) == 0 {
		return "/probe"
	}
	c := cfg.Clusters[0]
	n := c.Nodes[0]
	probe := "/probe?target=" + url.QueryEscape(net.JoinHostPort(n.Host, strconv.Itoa(n.Port)))
	if c.Name != "" {
		probe += "&module=" + url.QueryEscape(c.Name)
	}
	return probe
}
