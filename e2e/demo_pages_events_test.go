package e2e

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// What the rules saw of the demo, to explain the pages: the demo's incident
// log misses the events its background mix logs (a NODE_DOWN or a
// MEMORY_LOW now and then, on any node), so these come from the exporter's
// series in Prometheus.

// conditionGap ends a stretch of an alert's condition: more than one
// evaluation without it.
const conditionGap = demoEvalInterval * 3 / 2

// demoConditions says, per alert name, how often its condition held at an
// evaluation (ALERTS, pending or firing), for how long at most, and how
// many of those stretches lasted into firing: a condition shorter than the
// rule's `for` pends and never pages.
func demoConditions(t *testing.T, prom *prometheusServer, start time.Time) string {
	t.Helper()
	type stretch struct {
		from, to time.Time
		evals    int
		fired    bool
	}
	// One alert's ALERTS series are one per state; merge them by identity.
	points := map[string][]point{}
	fired := map[string]map[time.Time]bool{}
	for _, s := range rangeSince(t, prom, "ALERTS", start) {
		id := s.Metric["alertname"] + alertKey(s.Metric)
		points[id] = append(points[id], s.Points...)
		if s.Metric["alertstate"] == "firing" {
			if fired[id] == nil {
				fired[id] = map[time.Time]bool{}
			}
			for _, p := range s.Points {
				fired[id][p.At] = true
			}
		}
	}
	byName := map[string][]stretch{}
	for id, ps := range points {
		slices.SortFunc(ps, func(a, b point) int { return a.At.Compare(b.At) })
		var ss []stretch
		for _, p := range ps {
			if n := len(ss); n > 0 && p.At.Sub(ss[n-1].to) <= conditionGap {
				ss[n-1].to = p.At
				ss[n-1].evals++
				ss[n-1].fired = ss[n-1].fired || fired[id][p.At]
				continue
			}
			ss = append(ss, stretch{from: p.At, to: p.At, evals: 1, fired: fired[id][p.At]})
		}
		name, _, _ := strings.Cut(id, "{")
		byName[name] = append(byName[name], ss...)
	}
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		var longest stretch
		nfired := 0
		for _, s := range byName[name] {
			if s.evals > longest.evals {
				longest = s
			}
			if s.fired {
				nfired++
			}
		}
		fmt.Fprintf(&b, "  %-34s %3d stretches, the longest seen by %d evaluations (%s from first to last), %d reached firing\n", name, len(byName[name]), longest.evals, longest.to.Sub(longest.from), nfired)
	}
	return b.String()
}

// demoReports lists, per node reported down, the dates of the NODE_DOWN
// reports the exporter exposed (indexima_node_down_last_report_timestamp_seconds
// of every reporter: each new value is a newer report), and the gaps
// between them longer than IndeximaNodeDownReported's 5 minutes, after
// which its alert resolves and the next report raises a new one.
func demoReports(t *testing.T, prom *prometheusServer, start time.Time) string {
	t.Helper()
	dates := map[string]map[float64]bool{}
	for _, s := range rangeSince(t, prom, "indexima_node_down_last_report_timestamp_seconds", start) {
		d := s.Metric["down_node"]
		if dates[d] == nil {
			dates[d] = map[float64]bool{}
		}
		for _, p := range s.Points {
			dates[d][p.Value] = true
		}
	}
	var b strings.Builder
	for _, d := range slices.Sorted(maps.Keys(dates)) {
		var at []time.Time
		for _, v := range slices.Sorted(maps.Keys(dates[d])) {
			at = append(at, time.UnixMilli(int64(v*1000)))
		}
		fmt.Fprintf(&b, "  down_node=%s: %s\n", d, describeTimes(at, start, 5*time.Minute))
	}
	return b.String()
}

// demoGrowths lists, per node, when the counter of event (a type of
// indexima_events_total) grew, to the scrape, and the gaps longer than
// window between two growths.
func demoGrowths(t *testing.T, prom *prometheusServer, start time.Time, event string, window time.Duration) string {
	t.Helper()
	var b strings.Builder
	series := rangeSince(t, prom, fmt.Sprintf("indexima_events_total{event=%q}", event), start)
	slices.SortFunc(series, func(x, y rangeSeries) int { return strings.Compare(x.Metric["node"], y.Metric["node"]) })
	for _, s := range series {
		var at []time.Time
		for i := 1; i < len(s.Points); i++ {
			for range int(s.Points[i].Value - s.Points[i-1].Value) {
				at = append(at, s.Points[i].At)
			}
		}
		fmt.Fprintf(&b, "  node=%s: %s\n", s.Metric["node"], describeTimes(at, start, window))
	}
	return b.String()
}

// describeTimes gives how many times, their offsets from start, and the
// gaps between two of them longer than window.
func describeTimes(at []time.Time, start time.Time, window time.Duration) string {
	var offsets, gaps []string
	for i, a := range at {
		offsets = append(offsets, a.Sub(start).Round(time.Second).String())
		if i > 0 && a.Sub(at[i-1]) > window {
			gaps = append(gaps, fmt.Sprintf("%s-%s", at[i-1].Sub(start).Round(time.Second), a.Sub(start).Round(time.Second)))
		}
	}
	return fmt.Sprintf("%d [%s]; gaps over %s: %d %v", len(at), strings.Join(offsets, " "), window, len(gaps), gaps)
}
