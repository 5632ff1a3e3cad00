package collector

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// Several events at exactly the cursor's millisecond, some identical: those
// already counted are not counted again, those arriving later at the same
// millisecond are, whether lastevents repeats the boundary (inclusive) or
// not (exclusive: only event/count shows them, and paging finds them).
func TestEventsAtCursorTimestamp(t *testing.T) {
	for _, exclusive := range []bool{false, true} {
		name := "inclusive"
		if exclusive {
			name = "exclusive"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, simulator.Config{Readings: simulator.Readings{ExclusiveSince: exclusive}}, 1, testOptions{})
			n := e.nodes[0]
			e.scrape(nil)
			e.clock.Advance(time.Second)
			t1 := e.nowMS()
			same := simulator.Event{Type: simulator.SaveMetadata, Date: t1, Duration: 0, Comment: "2"}
			e.sim.Append(n, same, same, same,
				simulator.Event{Type: simulator.NodeDown, Date: t1, Comment: "3"})
			m := e.scrape(nil) // cursor = t1: these four are counted now
			e.checkTruth(m, nil)
			if got := m.value(t, "indexima_events_cursor_timestamp_seconds", l("node", n)); int64(got*1000+0.5) != t1 {
				t.Fatalf("cursor %v, want %d", got, t1)
			}
			// More at the cursor's millisecond, identical and not.
			e.sim.Append(n, same, same,
				simulator.Event{Type: simulator.NodeDown, Date: t1, Comment: "4"},
				simulator.Event{Type: simulator.MemoryLow, Date: t1})
			for i := 0; i < 3; i++ {
				e.clock.Advance(700 * time.Millisecond)
				m = e.scrape(nil)
				e.checkTruth(m, nil)
			}
			// All these events completed at once (no running ones), so
			// the console's counts over the polled intervals add up to
			// exactly what was counted: no interval overlaps another at
			// the cursor's millisecond.
			var counted float64
			for _, s := range m.series("indexima_events_total", l("node", n)) {
				counted += s.value
			}
			if got := m.value(t, "indexima_events_reported_total", l("node", n)); got != counted {
				t.Errorf("events reported %v, counted %v: count intervals overlap or miss", got, counted)
			}
			if got := m.value(t, "indexima_events_total", l("node", n, "event", "SAVE_METADATA")); got != 5 {
				t.Errorf("SAVE_METADATA counted %v times, want 5", got)
			}
			if got := m.value(t, "indexima_metadata_tables_upgraded_total", l("node", n)); got != 10 {
				t.Errorf("metadata tables upgraded %v, want 10", got)
			}
			if got := m.value(t, "indexima_node_down_reports_total", l("node", n, "down_node", "3")); got != 1 {
				t.Errorf("node_down{3} = %v, want 1", got)
			}
		})
	}
}

// A console whose listings hold fewer events than arrived: event/count
// reveals it and paging through get/event/asc counts the rest, even when the
// console also caps :limit silently.
func TestCappedListingsForcePaging(t *testing.T) {
	for _, tc := range []struct {
		name          string
		listing, page int
	}{
		{"listing cap", 10, 0},
		{"listing and silent limit cap", 10, 7},
		{"silent limit below listing cap", 25, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, simulator.Config{Seed: 7, Rate: 4, Readings: simulator.Readings{ListingCap: tc.listing, MaxLimit: tc.page}}, 2, testOptions{})
			r := rand.New(rand.NewPCG(3, 4))
			e.scrape(nil)
			e.sim.ResetStats()
			var m metrics
			for i := 0; i < 12; i++ {
				e.advance(r, 5*time.Second, 30*time.Second)
				m = e.scrape(nil)
			}
			e.checkTruth(m, nil)
			if st := e.sim.Stats(); st.Requests["event_asc"] == 0 {
				t.Errorf("no paging happened: %v", st.Requests)
			}
		})
	}
}

// A burst of thousands of events at one millisecond: pages made of that one
// timestamp make the limit grow instead of looping.
func TestBurstAtOneMillisecond(t *testing.T) {
	e := newEnv(t, simulator.Config{Readings: simulator.Readings{ListingCap: 10}}, 1, testOptions{})
	n := e.nodes[0]
	e.scrape(nil)
	e.clock.Advance(time.Second)
	at := e.nowMS() - 500
	var burst []simulator.Event
	for i := 0; i < 2500; i++ {
		burst = append(burst, simulator.Event{Type: simulator.TableLoaded, Date: at, Duration: 1, Comment: "s.t"})
	}
	e.sim.Append(n, burst...)
	e.sim.Append(n, simulator.Event{Type: simulator.ClusterInit, Date: at + 1, Duration: 2})
	m := e.scrape(nil)
	e.checkTruth(m, nil)
	e.clock.Advance(time.Second)
	e.checkTruth(e.scrape(nil), nil)
}

// Events running for minutes, started before the cursor (even before first
// contact), are counted once, when they complete, without a call of their
// own; meanwhile they show in indexima_events_running.
func TestLongRunningEvents(t *testing.T) {
	for _, countRunning := range []bool{false, true} {
		t.Run(map[bool]string{false: "count completed", true: "count includes running"}[countRunning], func(t *testing.T) {
			testLongRunningEvents(t, simulator.Config{Readings: simulator.Readings{CountRunning: countRunning}})
		})
	}
}

func testLongRunningEvents(t *testing.T, cfg simulator.Config) {
	e := newEnv(t, cfg, 1, testOptions{})
	n := e.nodes[0]
	e.sim.Append(n, simulator.Event{Type: simulator.TableLoaded, Date: e.nowMS() - 60_000, Duration: 10 * 60_000, Comment: "big.table"})
	m := e.scrape(nil)
	if got := m.value(t, "indexima_events_running", l("node", n, "event", "TABLE_LOADED")); got != 1 {
		t.Fatalf("running TABLE_LOADED = %v, want 1", got)
	}
	// A console that counts running events is told from its first answers
	// (two searches that find nothing); from then on, and on a console that
	// counts completed events from the start, events started before the
	// cursor and completed between polls are listed again by the next
	// lastevents, which starts at the oldest running event: no call of
	// their own.
	for i := 0; i < 10 && (i == 0 || !detected(t, m, e.nodes)); i++ {
		e.clock.Advance(time.Second)
		m = e.scrape(nil)
	}
	if !detected(t, m, e.nodes) {
		t.Fatalf("count semantics not told after 10 polls with a running event")
	}
	e.sim.ResetStats()
	e.sim.Append(n, simulator.Event{Type: simulator.HyperIndexLoaded, Duration: 5 * 60_000, Comment: "hi_big"},
		simulator.Event{Type: simulator.SaveMetadata, Duration: 90_000, Comment: "1"})
	for i := 0; i < 14; i++ {
		e.clock.Advance(45 * time.Second)
		m = e.scrape(nil)
		e.checkTruth(m, nil)
	}
	if st := e.sim.Stats(); st.Requests["event_asc"] != 0 || st.Requests["lastevents"] != 14 || st.Requests["event_count"] != 14 {
		t.Errorf("running events cost calls of their own: %v in 14 polls", st.Requests)
	}
	for _, typ := range []string{"TABLE_LOADED", "HYPER_INDEX_LOADED", "SAVE_METADATA"} {
		if got := m.value(t, "indexima_events_total", l("node", n, "event", typ)); got != 1 {
			t.Errorf("%s counted %v times, want 1", typ, got)
		}
		if got := m.value(t, "indexima_events_running", l("node", n, "event", typ)); got != 0 {
			t.Errorf("%s still running: %v", typ, got)
		}
	}
	if got := m.value(t, "indexima_hyperindex_loaded", l("node", n, "index", "hi_big")); got != 1 {
		t.Errorf("hi_big loaded = %v", got)
	}
}

// A node's clock stepping back: the cursor stays (it is the newest event
// the node showed), nothing is counted twice, counters never go down, and
// the counts are exact again once the clock has caught up.
func TestNodeClockStepsBack(t *testing.T) {
	e := newEnv(t, simulator.Config{Seed: 3, Rate: 3}, 2, testOptions{})
	r := rand.New(rand.NewPCG(5, 6))
	shift := map[string]int64{}
	e.scrape(shift)
	for i := 0; i < 5; i++ {
		e.advance(r, time.Second, 10*time.Second)
		e.scrape(shift)
	}
	n := e.nodes[0]
	before := e.scrape(shift).value(t, "indexima_events_cursor_timestamp_seconds", l("node", n))
	e.sim.ShiftClock(n, -40*time.Second)
	shift[n] = -40_000
	e.clock.Advance(time.Second)
	m := e.scrape(shift)
	if got := m.value(t, "indexima_events_cursor_timestamp_seconds", l("node", n)); got < before {
		t.Errorf("cursor %v went back from %v", got, before)
	}
	e.checkTruth(m, nil)
	prev := map[string]float64{}
	for i := 0; i < 15; i++ {
		e.advance(r, time.Second, 10*time.Second)
		m = e.scrape(shift)
		for _, s := range m.series("indexima_events_total", l("node", n)) {
			if s.value < prev[s.labels["event"]] {
				t.Fatalf("counter %s went down", s.labels["event"])
			}
			prev[s.labels["event"]] = s.value
		}
	}
	e.checkTruth(m, nil)
}

// More pages than a poll may read: what is left is read by the next polls,
// and in the end every event is counted once and reported once.
func TestPageBoundResumes(t *testing.T) {
	e := newEnv(t, simulator.Config{Readings: simulator.Readings{ListingCap: 2, MaxLimit: 2}}, 1, testOptions{})
	n := e.nodes[0]
	e.scrape(nil)
	t0 := e.nowMS()
	var evs []simulator.Event
	for i := 0; i < 400; i++ {
		evs = append(evs, simulator.Event{Type: simulator.SaveMetadata, Date: t0 + 1 + int64(i), Duration: 1, Comment: "1"})
	}
	e.sim.Append(n, evs...)
	e.clock.Advance(time.Second)
	m := e.scrape(nil)
	first := m.value(t, "indexima_events_total", l("node", n, "event", "SAVE_METADATA"))
	if first == 0 || first >= float64(len(evs)) {
		t.Errorf("first poll counted %v of %d events; want a part (pages of 2, a bounded number per poll)", first, len(evs))
	}
	for i := 0; i < 4; i++ {
		m = e.scrape(nil)
	}
	e.checkTruth(m, nil)
	if got := m.value(t, "indexima_events_reported_total", l("node", n)); got != float64(len(evs)) {
		t.Errorf("events reported %v, want %d", got, len(evs))
	}
}
