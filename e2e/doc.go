// Package e2e holds the end-to-end test of the observability kit: the real
// exporter binary, polling the simulated cluster (internal/simulator), is
// scraped by a real Prometheus that evaluates the shipped alerting rules; the
// test drives incidents on the cluster and checks through Prometheus's HTTP
// API that the alerts go pending, fire with the right labels and resolve,
// that nothing fires on a quiet cluster or because the exporter restarted
// (while an incident during its downtime still fires), and that every query
// of every dashboard returns data.
//
// TestEndToEnd runs on both tested Prometheus lines: Debian's 2.42 and 3.15
// (left-open range windows, OpenMetrics asked first). On 3.15,
// TestScrapeFormatsAndNativeHistograms also scrapes the exporter over
// OpenMetrics 1.0, protobuf and text 0.0.4 (same values, no scrape error), and
// with classic histograms converted to native ones, on which every dashboard
// histogram query must give the classic buckets' numbers.
//
// TestEachPrometheusAcceptHeader has each line scrape the exporter with every
// Accept header it can send (testkit.ScrapeAccepts: 2.42's two, 3.15's
// defaults and each of its stable scrape_protocols and escaping schemes) and
// checks the header sent, the Content-Type answered, and that every answer
// was ingested, with the same series.
//
// TestProbeTargetsDiscoveredFromTheExporter runs the shipped
// deploy/prometheus/prometheus-probe.yml on both lines: Prometheus learns the
// nodes of two clusters from the exporter's /sd alone, probes each through
// /probe with its target and module, and follows a reload of the exporter's
// configuration that removes a node and adds another.
//
// TestDocsPromQLOnTheDemo runs every PromQL expression of the README and
// docs/*.md, read from the Markdown itself (```promql blocks and code spans
// that are PromQL), on both lines scraping the exporter's --demo: each parses
// and returns data unless its text says when it is empty, names only
// metrics that exist, and a value its text claims ("(should stay 0)") holds
// at every second of the run.
//
// Run it with `go test ./e2e/` (about five minutes). It needs prometheus
// (Debian package prometheus) and prometheus3 (built by
// scripts/install-test-deps.sh into the tools cache): without them the tests
// are skipped, or fail when the environment variable CI is set.
package e2e
