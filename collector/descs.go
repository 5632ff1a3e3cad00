package collector

const namespace = "indexima"

// descs holds every descriptor of the per-node and per-console series: here
// those every node has (scrape.go emits them), in each collector_*.go file
// its sub-collector's. There are two sets: with the cluster label (several
// clusters configured) and without it (one unnamed cluster).
type descs struct {
	withCluster bool

	consoleUp *scrapeDesc

	up, pollDuration, dropped, pollFailures *seriesDesc

	// Each sub-collector's own, in its file (collector_*.go).
	eventsDescs
	hyperindexesDescs
	tablesDescs
	versionDescs
	columnsDescs
}

// nodeDesc makes the descriptor of a per-node series: the node's labels
// (cluster and node, or node alone) and at most one more.
type nodeDesc func(name, help string, extra ...string) *seriesDesc

func newDescs(withCluster bool) *descs {
	nodeLabels := []string{"node"}
	var consoleLabels []string
	if withCluster {
		nodeLabels = []string{"cluster", "node"}
		consoleLabels = []string{"cluster"}
	}
	node := nodeDesc(func(name, help string, extra ...string) *seriesDesc {
		if len(extra) == 0 {
			return newSeriesDesc(name, help, nodeLabels, "")
		}
		return newSeriesDesc(name, help, nodeLabels, extra[0])
	})
	return &descs{
		withCluster: withCluster,
		up: node(namespace+"_up",
			"1 if the node answered every call of this scrape's event poll through the console, else 0."),
		pollDuration: node(namespace+"_exporter_node_poll_duration_seconds",
			"Duration in seconds of the latest poll of the node (event listings, count, paging, info calls)."),
		pollFailures: node(namespace+"_exporter_node_poll_failures_total",
			"Polls of the node that failed, by reason: deadline (the scrape's deadline came first), console_unreachable, bad_credentials, node_unreachable, malformed, refused, other.", "reason"),
		dropped: node(namespace+"_exporter_label_values_dropped_total",
			"Events whose label value (table, index, down node from the event comment) was dropped because the per-node bound of distinct values was reached.", "label"),
		consoleUp: newScrapeDesc(namespace+"_console_up",
			"1 if the cluster console answered this scrape (a successful call, or an error about a node), 0 if it was unreachable or refused the credentials.", consoleLabels),

		eventsDescs:       newEventsDescs(node),
		hyperindexesDescs: newHyperindexesDescs(node),
		tablesDescs:       newTablesDescs(node),
		versionDescs:      newVersionDescs(node),
		columnsDescs:      newColumnsDescs(node),
	}
}

// Exporter-level descriptors (no node, no cluster).
var (
	collectorSuccessDesc = newScrapeDesc(namespace+"_exporter_collector_success",
		"1 if the sub-collector's data is fresh for every contacted node this scrape (no failed event poll or info call), else 0.", []string{"collector"})
	collectorDurationDesc = newScrapeDesc(namespace+"_exporter_collector_duration_seconds",
		"Duration in seconds of the sub-collector's part of this scrape.", []string{"collector"})
)
