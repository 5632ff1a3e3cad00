// Package collector turns the nodes' committed states into Prometheus
// series. Its Exporter is a prometheus.Collector that, at each scrape, asks
// the poller (package poller) to poll the nodes within the scrape's
// deadline, then reads what the polls committed and emits, per node, the
// core series (scrape.go) and those of every enabled sub-collector
// (collector_*.go, one file each, joining the registry in registry.go from
// its init, and declaring its own descriptors as data; those of the core
// series are in descs.go), with const series built for
// hundreds of nodes (series.go). The sub-collectors emit through a sink
// (sink.go): to a collector's channel (Collect, /probe), or for /metrics
// straight into metric families without a registry (families.go,
// ScrapeGatherer, the protobuf format), or, for /metrics in a text format,
// as records whose lines are kept from one scrape to the next and written
// anew only when their series change (text.go, records.go, textwrite.go,
// ScrapeText). NewAPIObserver (observer.go) feeds the exporter's own
// metrics of its console calls.
//
// It does not poll, count, keep cursors, talk HTTP or compress: polls,
// deadlines, shared polls, failure reasons and info calls are the poller's,
// counting is the engine's (tracker) and what it counts the tally's
// (tally; the labels of its names are collector/labels.go's), HTTP is the client's (apiclient) and
// the web endpoints'. The state file is package store's.
package collector
