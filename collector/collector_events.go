package collector

import (
	"sort"
)

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
	gauge := func(desc *seriesDesc, val float64, extra string) { v.gauge(desc, val, extra) }
	counter := func(desc *seriesDesc, val float64, extra string) { v.counter(desc, val, extra) }

	for _, t := range sortedKeys(st.Events) {
		counter(d.eventsTotal, float64(st.Events[t]), t)
	}
	running := map[string]int{}
	for _, t := range knownTypes {
		running[t] = 0
	}
	for t, c := range st.Running {
		running[t] = c
	}
	for _, t := range sortedKeys(running) {
		gauge(d.eventsRunning, float64(running[t]), t)
	}
	for _, t := range sortedKeys(st.LastDate) {
		gauge(d.eventLast, float64(st.LastDate[t])/1000, t)
	}
	for _, t := range sortedKeys(st.Durations) {
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
	for _, n := range sortedKeys(st.NodeDown) {
		counter(d.nodeDown, float64(st.NodeDown[n]), n)
	}
	if st.Preload.Known {
		gauge(d.preload, float64(st.Preload.Value), "")
	}
	counter(d.metadataUpgraded, float64(st.MetadataUpgraded), "")
	counter(d.cursorRepairs, float64(st.CursorRepairs), "")

	// What the engine learned of the console.
	if st.Lateness.LagKnown {
		gauge(d.clockLag, float64(st.Lateness.LagMS)/1000, "")
	}
	gauge(d.lateWindow, v.lateWindow.Seconds(), "")
	detected := string(st.Semantics.Detected())
	for _, s := range countSemantics {
		gauge(d.countSemantics, boolValue(s == detected), s)
	}
	return v.res.Err
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
