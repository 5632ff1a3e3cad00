package collector

const namespace = "indexima"

// descs holds every descriptor of the per-node and per-console series. There
// are two sets: with the cluster label (several clusters configured) and
// without it (one unnamed cluster).
type descs struct {
	withCluster bool

	consoleUp *scrapeDesc

	up, pollDuration, dropped, pollFailures *seriesDesc

	eventsTotal, eventsRunning, eventLast, eventDuration *seriesDesc
	reported, cursor, clusterState, nodeDown, preload    *seriesDesc
	nodeDownLast                                         *seriesDesc
	metadataUpgraded, cursorRepairs                      *seriesDesc
	clockLag, lateWindow, countSemantics                 *seriesDesc

	hyperindex, table, nodeInfo, tableColumns *seriesDesc
}

func newDescs(withCluster bool) *descs {
	nodeLabels := []string{"node"}
	var consoleLabels []string
	if withCluster {
		nodeLabels = []string{"cluster", "node"}
		consoleLabels = []string{"cluster"}
	}
	node := func(name, help string, extra ...string) *seriesDesc {
		if len(extra) == 0 {
			return newSeriesDesc(name, help, nodeLabels, "")
		}
		return newSeriesDesc(name, help, nodeLabels, extra[0])
	}
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

		eventsTotal: node(namespace+"_events_total",
			"Events completed on the node since the exporter first contacted it, by event type, from the console's event listings.", "event"),
		eventsRunning: node(namespace+"_events_running",
			"Events running on the node at the latest poll, by event type, from the runnings of the event listing.", "event"),
		eventLast: node(namespace+"_event_last_timestamp_seconds",
			"Start time (Unix seconds) of the latest completed event of the type on the node, from the event listings (the day's listing included).", "event"),
		eventDuration: node(namespace+"_event_duration_seconds",
			"Duration in seconds of counted events, by event type, from the event's duration field (milliseconds in the API).", "event"),
		reported: node(namespace+"_events_reported_total",
			"The console's own number of the node's events completed since the exporter first contacted it, from its event/count answers (running events excluded, late events included); reported minus the sum of indexima_events_total is 0 exactly when nothing was missed."),
		cursor: node(namespace+"_events_cursor_timestamp_seconds",
			"Event time (Unix seconds) up to which the node's events have been read: the start of the newest event its listings showed (never ahead of the console's clock)."),
		cursorRepairs: node(namespace+"_exporter_cursor_repairs_total",
			"Times the node's cursor was found ahead of the console's clock with no event behind it (a `last` that is not a clock, a clock stepped back) and first contact was taken again, counters kept."),
		clusterState: node(namespace+"_cluster_state",
			"Cluster state as seen by the node (state set: exactly one state is 1), from the latest CLUSTER_START, PRELOAD_FINISHED, CLUSTER_INIT or CLUSTER_STOP event.", "state"),
		nodeDown: node(namespace+"_node_down_reports_total",
			"NODE_DOWN events counted on the node, by the node reported down: the configured name of the node whose number the event's comment gives, when the event was first read (a reload does not rename it), else the comment (the node's number).", labelDownNode),
		nodeDownLast: node(namespace+"_node_down_last_report_timestamp_seconds",
			"Start time (Unix seconds) of the latest NODE_DOWN event logged by the node naming down_node (named as on indexima_node_down_reports_total), from the events read, the first-contact look-back included.", labelDownNode),
		preload: node(namespace+"_preload_indexes_loaded",
			"Number of indexes loaded by the latest preload, from the comment of the latest PRELOAD_FINISHED event."),
		metadataUpgraded: node(namespace+"_metadata_tables_upgraded_total",
			"Tables upgraded by metadata saves, the sum of the numbers in the comments of counted SAVE_METADATA events."),
		clockLag: node(namespace+"_node_clock_lag_seconds",
			"How far the node's clock is behind the console's (negative: ahead), within 5 s: the middle of the bracket the events its listings showed for the first time over the last hour put on it (the console's Date header against the events' dates). Absent when the listings cannot tell it that closely: a quiet node, no Date header, a clock step not yet confirmed by a second poll. A console that shows events late adds its delay. Events that become visible dated more than indexima_events_late_window_seconds behind the console's clock can be lost."),
		lateWindow: node(namespace+"_events_late_window_seconds",
			"The late window: an event that becomes visible dated up to this far behind the cursor (listed only once completed, or dated by a lagging node clock) is still counted exactly once (--events.late-window)."),
		countSemantics: node(namespace+"_event_count_semantics",
			"What the console's event/count counts, detected from its answers (state set): completed events only, running events too, or unknown (not told yet, or the console lists no running events).", "semantics"),

		hyperindex: node(namespace+"_hyperindex_loaded",
			"1 if the hyperindex is loaded on the node, 0 if unloaded, from the latest HYPER_INDEX_LOADED or HYPER_INDEX_UNLOADED event.", labelIndex),
		table: node(namespace+"_table_loaded",
			"1 for each table loaded on the node since the latest CLUSTER_START or CLUSTER_STOP, from TABLE_LOADED events.", labelTable),
		nodeInfo: node(namespace+"_node_info",
			"Always 1; the version label is the node's answer to get/version (refreshed periodically).", "version"),
		tableColumns: node(namespace+"_table_columns",
			"Number of columns of a loaded table, from the node's get/columns answer (refreshed periodically).", labelTable),
	}
}

// Exporter-level descriptors (no node, no cluster).
var (
	collectorSuccessDesc = newScrapeDesc(namespace+"_exporter_collector_success",
		"1 if the sub-collector's data is fresh for every contacted node this scrape (no failed event poll or info call), else 0.", []string{"collector"})
	collectorDurationDesc = newScrapeDesc(namespace+"_exporter_collector_duration_seconds",
		"Duration in seconds of the sub-collector's part of this scrape.", []string{"collector"})
)
