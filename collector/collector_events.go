package collector

import "slices"

func init() {
	registerCollector("events", true, "event counters, running events, durations, cluster state, cursor",
		func() subCollector { return eventsCollector{} })
}

// eventsCollector emits what the counting engine counts and learns:
// counters by type, running events, durations, the cluster state set,
// NODE_DOWN reports, preload and metadata numbers, the cursor, the
// self-check, the node's clock lag and the console's count semantics.
type eventsCollector struct{}

func (eventsCollector) update(v *nodeView) error {
	d, st := v.d, v.st
	gauge, counter := v.gauge, v.counter

	for _, t := range sortedKeys(v, st.Events) {
		counter(d.eventsTotal, float64(st.Events[t]), t)
	}
	// Every known type (0 when none runs), and the other types running.
	for _, t := range runningTypes(v, st.Running) {
		gauge(d.eventsRunning, float64(st.Running[t]), t)
	}
	for _, t := range sortedKeys(v, st.LastDate) {
		gauge(d.eventLast, float64(st.LastDate[t])/1000, t)
	}
	for _, t := range sortedKeys(v, st.Durations) {
		h := st.Durations[t]
		v.histogram(d.eventDuration, h, t)
	}
	counter(d.reported, float64(st.Reported), "")
	gauge(d.cursor, float64(st.Cursor)/1000, "")

	current := st.Phase.Value
	if current == "" {
		current = stateUnknown
	}
	for _, s := range clusterStates {
		gauge(d.clusterState, boolValue(s == current), s)
	}
	emitNodeDown(v)
	if st.Preload.Known {
		gauge(d.preload, float64(st.Preload.Value), "")
	}
	counter(d.metadataUpgraded, float64(st.MetadataUpgraded), "")
	counter(d.cursorRepairs, float64(st.CursorRepairs), "")

	// What the engine learned of the console.
	if lag, ok := st.ClockLag(); ok {
		gauge(d.clockLag, float64(lag)/1000, "")
	}
	gauge(d.lateWindow, v.lateWindow.Seconds(), "")
	detected := string(st.Semantics.Detected())
	for _, s := range countSemantics {
		gauge(d.countSemantics, boolValue(s == detected), s)
	}
	return v.res.Err
}

// emitNodeDown emits the NODE_DOWN reports and the latest report's date by
// down node: the engine's keys are the labels, each the name the report
// was given when it was first read (tracker.Options.DownNodeName), which a
// reload does not change.
func emitNodeDown(v *nodeView) {
	st := v.st
	for _, n := range sortedKeys(v, st.NodeDown) {
		v.counter(v.d.nodeDown, float64(st.NodeDown[n]), n)
	}
	for _, n := range sortedKeys(v, st.NodeDownLast) {
		v.gauge(v.d.nodeDownLast, float64(st.NodeDownLast[n])/1000, n)
	}
}

// sortedKnownTypes is knownTypes in the order of the series.
var sortedKnownTypes = func() []string {
	s := slices.Clone(knownTypes)
	slices.Sort(s)
	return s
}()

// runningTypes is the known types and those of running, sorted: the known
// types alone (no allocation) when every running type is one of them.
func runningTypes(v *nodeView, running map[string]int) []string {
	for t := range running {
		if !slices.Contains(sortedKnownTypes, t) {
			all := make(map[string]int, len(knownTypes)+len(running))
			for _, k := range knownTypes {
				all[k] = 0
			}
			for k := range running {
				all[k] = 0
			}
			return sortedKeys(v, all)
		}
	}
	return sortedKnownTypes
}

// eventsDescs are the descriptors of the events collector's series.
type eventsDescs struct {
	eventsTotal, eventsRunning, eventLast, eventDuration *seriesDesc
	reported, cursor, clusterState, nodeDown, preload    *seriesDesc
	nodeDownLast                                         *seriesDesc
	metadataUpgraded, cursorRepairs                      *seriesDesc
	clockLag, lateWindow, countSemantics                 *seriesDesc
}

func newEventsDescs(node nodeDesc) eventsDescs {
	return eventsDescs{
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
	}
}
