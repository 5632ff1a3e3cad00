package collector

import (
	"fmt"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// detected tells whether every node's count semantics is known (a console
// that counts running events is told by searches that find nothing, made
// when running events are first listed: at 0.2 events/s that takes a while).
func detected(t *testing.T, m metrics, nodes []string) bool {
	t.Helper()
	for _, n := range nodes {
		if m.value(t, "indexima_event_count_semantics", l("node", n, "semantics", "unknown")) == 1 {
			return false
		}
	}
	return true
}

// Issue "Busy nodes cost two calls": at 0.2, 2 and 20 events per second per
// node, with and without a count that includes running events, three nodes
// scraped every second for 30 s: counts equal the truth at every scrape,
// reported minus counted is 0 at the end, and the steady state (after first
// contact, and once a console that counts running events is told) costs two
// console calls per node and scrape (the clock only moves between scrapes,
// so the number of calls does not depend on the machine).
func TestBusyNodesTwoCallsAndAnHonestSelfCheck(t *testing.T) {
	for _, rate := range []float64{0.2, 2, 20} {
		for _, countRunning := range []bool{false, true} {
			t.Run(fmt.Sprintf("rate=%g count_running=%v", rate, countRunning), func(t *testing.T) {
				e := newEnv(t, simulator.Config{Seed: 5, Rate: rate, Readings: simulator.Readings{CountRunning: countRunning}}, 3, testOptions{})
				m := e.scrape(nil)
				const warmUp, steady = 5, 30
				for i := 0; i < warmUp || countRunning && !detected(t, m, e.nodes) && i < 300; i++ {
					e.clock.Advance(time.Second)
					m = e.scrape(nil)
				}
				e.sim.ResetStats()
				for i := 0; i < steady; i++ {
					e.clock.Advance(time.Second)
					m = e.scrape(nil)
					e.checkTruth(m, nil)
				}
				st := e.sim.Stats()
				calls := 0
				for _, n := range e.nodes {
					calls += st.NodeRequests[n]
				}
				perScrape := float64(calls) / float64(steady*len(e.nodes))
				t.Logf("%.3f console calls per node and scrape: %v", perScrape, st.Requests)
				if perScrape > 2.05 {
					t.Errorf("%.3f console calls per node and scrape in the steady state, want at most 2.05: %v", perScrape, st.Requests)
				}
				for _, n := range e.nodes {
					var counted float64
					for _, s := range m.series("indexima_events_total", l("node", n)) {
						counted += s.value
					}
					if got := m.value(t, "indexima_events_reported_total", l("node", n)); got != counted {
						t.Errorf("node %s: reported %v, counted %v", n, got, counted)
					}
				}
			})
		}
	}
}
