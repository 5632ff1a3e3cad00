package faults

import (
	"fmt"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// A node's clock steps back (or it restarted with a wrong clock): its new
// events are dated behind the cursor (the newest event shown), counters
// never go down (every scrape checks), the events of the stepped-back clock
// are counted from the first polls on, and events already counted are not
// counted again when the node's clock runs over them a second time.
func TestClockGoesBackwards(t *testing.T) {
	for _, back := range []time.Duration{-30 * time.Second, -10 * time.Minute, -3 * time.Hour} {
		t.Run(fmt.Sprint(back), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, rigOpts{sim: simulator.Config{Seed: 8, Rate: 3}})
			r.scrape()
			r.run(20, 30*time.Second)
			n := r.nodes[0]
			r.shiftClock(n, back)
			for i := 0; i < 3; i++ {
				r.advance(30 * time.Second)
				r.checkNode(r.scrape(), n)
			}
			// Run until the node's clock is well past where it was, in
			// about 20 scrapes whatever the step back.
			step := max(30*time.Second, -back/20)
			r.run(int(-back/step)+10, step)
			tl := r.check(r.settle())
			t.Logf("clock back %v: %s", back, tl)
		})
	}
}

// Events dated exactly at the cursor are listed again by the next
// incremental listing (lastevents is inclusive); identical events (same
// type, date, duration and comment) are distinct events all the same.
func TestEventsAtTheCursor(t *testing.T) {
	for _, exclusive := range []bool{false, true} {
		t.Run(fmt.Sprintf("exclusive_since=%v", exclusive), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, rigOpts{sim: simulator.Config{Seed: 9, Readings: simulator.Readings{ExclusiveSince: exclusive}}})
			n := r.nodes[0]
			r.scrape()
			r.advance(10 * time.Second)
			same := simulator.Event{Type: simulator.TableLoaded, Comment: "sales.orders"} // date 0: now, duration 0
			r.sim.Append(n, same, same, same)
			r.scrape() // cursor is now exactly their date
			r.sim.Append(n, same, same, simulator.Event{Type: simulator.SaveMetadata, Comment: "3"})
			r.scrape() // same instant: two more identical ones and another
			r.advance(30 * time.Second)
			r.scrape() // the inclusive listing repeats all six
			r.advance(30 * time.Second)
			s := r.scrape()
			got, _ := s.value("indexima_events_total", map[string]string{"node": n, "event": simulator.TableLoaded})
			if got != 5 {
				t.Errorf("TABLE_LOADED at the cursor counted %v times, want 5", got)
			}
			tl := r.check(r.settle())
			t.Logf("events at the cursor (exclusive since %v): %s", exclusive, tl)
		})
	}
}

// More events arrive between two scrapes than one listing holds (a console
// whose listings keep only the oldest ListingCap events, and whose asc
// :limit is silently capped too): the exporter pages and counts them all.
func TestListingCapPaging(t *testing.T) {
	r := newRig(t, rigOpts{sim: simulator.Config{Seed: 10, Rate: 4, Readings: simulator.Readings{ListingCap: 50, MaxLimit: 120}}})
	r.scrape()
	s := r.run(10, time.Minute) // ~240 events per node per scrape, 50 per listing
	_ = s
	st := r.sim.Stats()
	if st.Requests["event_asc"] == 0 {
		t.Fatalf("no asc page was requested: the listing cap did not bite")
	}
	tl := r.check(r.settle())
	t.Logf("listing cap 50, max limit 120, 4 events/s: %d asc pages; %s", st.Requests["event_asc"], tl)
}

// A node fails for a whole busy day of simulated time, then comes back: the
// backlog (tens of thousands of events, listings capped) is paged through
// over the next polls and counted exactly once.
func TestBacklogAfterLongOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("a day of backlog; skipped with -short")
	}
	r := newRig(t, rigOpts{sim: simulator.Config{Seed: 11, Rate: 1, Readings: simulator.Readings{ListingCap: 1000}}, timeout: 10 * time.Second})
	bad := r.nodes[2]
	r.scrape()
	r.run(3, time.Minute)
	r.sim.SetNodeFault(bad, simulator.Fault{Status: 502})
	r.run(24, time.Hour)
	r.sim.ClearFaults()
	s := r.settle()
	want := 0
	for _, v := range r.want(bad) {
		want += int(v)
	}
	if want < 50000 {
		t.Fatalf("backlog of only %d events: the case proves nothing", want)
	}
	tl := r.check(s)
	t.Logf("24 h outage of one node at 1 event/s (listing cap 1000): backlog %d events; all nodes %s", want, tl)
}

// A busy node: eight events a second, many of them running for seconds to
// minutes, so every poll finds dozens of events that started before the
// cursor and completed since (lastevents never lists those): they are
// looked up and counted, none lost to the lookup budget.
func TestBusyNodeManyRunningEvents(t *testing.T) {
	r := newRig(t, rigOpts{nodes: 2, sim: simulator.Config{Seed: 22, Rate: 8}})
	r.scrape()
	r.run(60, time.Minute)
	tl := r.check(r.settle())
	t.Logf("8 events/s per node, 60 scrapes a minute apart: %s", tl)
}
