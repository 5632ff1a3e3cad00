package collector

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// Background events at a steady rate, scraped at irregular intervals: every
// event completed after first contact is counted once, none before.
func TestCountsMatchTruthWithBackgroundRate(t *testing.T) {
	e := newEnv(t, simulator.Config{Seed: 1, Rate: 3}, 3, testOptions{})
	r := rand.New(rand.NewPCG(1, 2))
	m := e.scrape(nil)
	for _, n := range e.nodes {
		if got := m.value(t, "indexima_up", l("node", n)); got != 1 {
			t.Fatalf("node %s up = %v", n, got)
		}
		// The cursor is the newest event the console showed (completed or
		// running), never past the node's clock.
		var newest int64
		for _, ev := range e.sim.Truth(n) {
			if ev.Date <= e.baseline[n] {
				newest = max(newest, ev.Date)
			}
		}
		if got := m.value(t, "indexima_events_cursor_timestamp_seconds", l("node", n)); int64(got*1000+0.5) != newest {
			t.Errorf("node %s cursor %v, want the newest event's date %d", n, got, newest)
		}
	}
	e.checkTruth(m, nil) // all zero: nothing counted at first contact
	for i := 0; i < 40; i++ {
		e.advance(r, 100*time.Millisecond, 20*time.Second)
		m = e.scrape(nil)
		if i%10 == 9 {
			e.checkTruth(m, nil)
		}
	}
	e.checkTruth(m, nil)
	// Every simulated event has a duration: the histogram holds each counted
	// event once, with the truth's total duration.
	for _, n := range e.nodes {
		sums := map[string]float64{}
		for _, ev := range e.sim.Truth(n) {
			if ev.CompletedAt > e.baseline[n] && ev.CompletedAt <= e.high[n] {
				sums[ev.Type] += float64(ev.Duration) / 1000
			}
		}
		for typ, want := range sums {
			s := m.series("indexima_event_duration_seconds", l("node", n, "event", typ))
			if len(s) != 1 {
				t.Fatalf("node %s %s: no duration histogram", n, typ)
			}
			total := m.value(t, "indexima_events_total", l("node", n, "event", typ))
			if float64(s[0].hist.GetSampleCount()) != total || absDiff(s[0].hist.GetSampleSum(), want) > 1e-6 {
				t.Errorf("node %s %s: histogram count %d sum %v, want %v and %v", n, typ,
					s[0].hist.GetSampleCount(), s[0].hist.GetSampleSum(), total, want)
			}
		}
	}
}

func absDiff(a, b float64) float64 {
	if a > b {
		return a - b
	}
	return b - a
}
