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
