// Package e2e holds the end-to-end test of the observability kit: the real
// exporter binary, polling the simulated cluster (internal/simulator), is
// scraped by a real Prometheus that evaluates the shipped alerting rules; the
// test drives incidents on the cluster and checks through Prometheus's HTTP
// API that the alerts go pending, fire with the right labels and resolve,
// that nothing fires on a quiet cluster or because the exporter restarted
// (while an incident during its downtime still fires), and that every query
// of every dashboard returns data.
//
// Run it with `go test ./e2e/` (about two minutes). It needs the prometheus
// binary in PATH (Debian package prometheus): without it the test is skipped,
// or fails when the environment variable CI is set.
package e2e
