package collector

import (
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/poller"
)

// A backlog whose listing is larger than the client's body limit (a busy
// node after a long outage) is read in event/asc pages instead: the node is
// not stuck down retrying the same listing, and every event is counted once.
func TestBacklogOverBodyLimitIsReadInPages(t *testing.T) {
	e := newEnv(t, simulator.Config{}, 1, testOptions{})
	// Pages of 1000 events fit in 256 KiB; the 10,000-event listing does not.
	e.maxBody = 256 << 10
	e.p.SetClusters([]poller.Cluster{e.cluster("", e.nodes...)})
	n := e.nodes[0]
	e.scrape(nil) // first contact: the day's listing is small

	t0 := e.nowMS() + 1
	types := []string{simulator.TableLoaded, simulator.SaveMetadata, simulator.HyperIndexLoaded}
	var backlog []simulator.Event
	for i := range 10000 {
		backlog = append(backlog, simulator.Event{Type: types[i%len(types)], Date: t0 + int64(i)/3,
			Duration: 7, Comment: "sales.orders"})
	}
	e.sim.Append(n, backlog...)
	e.clock.Advance(time.Hour)
	e.sim.ResetStats()

	var m metrics
	for i := 0; i < 3; i++ {
		m = e.scrape(nil)
		if up := m.value(t, "indexima_up", l("node", n)); up != 1 {
			t.Fatalf("scrape %d: indexima_up %v: the node is stuck on its too-large listing", i, up)
		}
		e.clock.Advance(time.Second)
	}
	e.checkTruth(m, nil)
	if st := e.sim.Stats(); st.Requests["event_asc"] < 10 {
		t.Errorf("%d event_asc pages for a 10,000-event backlog, want at least 10", st.Requests["event_asc"])
	}
	var counted float64
	for _, s := range m.series("indexima_events_total", l("node", n)) {
		counted += s.value
	}
	if got := m.value(t, "indexima_events_reported_total", l("node", n)); got != counted {
		t.Errorf("events reported %v, counted %v", got, counted)
	}
}
