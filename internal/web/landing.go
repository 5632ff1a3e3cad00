package web

import (
	"html"
	"net/http"

	"github.com/prometheus/common/version"
	toolkitweb "github.com/prometheus/exporter-toolkit/web"
)

// landingPage is the page of /: the exporter's name and version, then a link
// to each endpoint with what it serves.
//
// exporter-toolkit renders it with text/template, which escapes nothing:
// every text is escaped here, or a description such as
// "/probe?target=<node>" would reach the browser as tags and be shown
// without them. Its LandingConfig also shows links to /debug/pprof when
// Profiling is left empty; the exporter serves no pprof, so it is "false".
func landingPage(metricsPath string) (http.Handler, error) {
	link := func(address, text, description string) toolkitweb.LandingLinks {
		return toolkitweb.LandingLinks{Address: html.EscapeString(address), Text: html.EscapeString(text), Description: html.EscapeString(description)}
	}
	return toolkitweb.NewLandingPage(toolkitweb.LandingConfig{
		Name:        "Indexima Exporter",
		Description: "Prometheus exporter for the events of Indexima clusters",
		// Version, revision and build date (from linker flags, or from Go's
		// build information: see internal/program/buildinfo.go).
		Version: html.EscapeString(version.Info() + " " + version.BuildContext()),
		Links: []toolkitweb.LandingLinks{
			link(metricsPath, "Metrics", ""),
			link("/status", "Status", "each node: up or down, its last polls, counted and reported events, its latest events"),
			link("/events", "Events", "the latest counted events of each node, as JSON: /events?cluster=<cluster>&node=<node>&since=<time>"),
			link("/-/healthy", "Health", "200 while the exporter runs"),
			link("/-/ready", "Readiness", "200 once a configuration is loaded"),
			link("/config", "Configuration", "the configuration in force, secrets hidden; POST /-/reload or SIGHUP reloads it"),
			link("/probe", "Probe", "one node: /probe?target=<node>&module=<cluster>"),
			link("/sd", "Targets", "the configured nodes as /probe targets, for Prometheus' http_sd_configs"),
		},
		Profiling: "false",
	})
}
