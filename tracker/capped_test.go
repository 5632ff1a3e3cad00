package tracker

import (
	"context"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// A node busier than its console's lastevents cap (40 events, the oldest
// kept; `last` the newest event returned) while running events keep the
// listing reaching back: the listings cut at the cap alternate with pages
// that read their interval whole, so that each poll costs its two calls,
// and every event is counted once, whichever way the console counts.
func TestBusyCappedListingTwoCallsAPoll(t *testing.T) {
	for _, countRunning := range []bool{false, true} {
		clock := simulator.NewManualClock(testEpoch)
		sim := simulator.New(simulator.Config{Clock: clock, Seed: 3, Rate: 20,
			Readings: simulator.Readings{Last: simulator.LastNewest, CountRunning: countRunning, ListingCap: 40},
			Nodes:    []simulator.NodeConfig{{Host: "n1"}}})
		node := sim.Nodes()[0]
		con := newSimConsole(sim, node)
		st := &State{}
		var contact int64 // the node's clock at first contact
		calls, polls := 0, 0
		for i := 0; i < 40; i++ {
			next, rep, err := Poll(context.Background(), con, st, Options{Now: clock.Now})
			if err != nil {
				t.Fatalf("count-running=%v poll %d: %v", countRunning, i, err)
			}
			if i == 0 {
				contact = clock.Now().UnixMilli()
			}
			if testing.Verbose() {
				t.Logf("poll %d: %+v pending=%d abandoned=%d mode=%s nodefer=%v retention=%v listcap=%d pagecap=%d", i, rep, len(next.Pending), len(next.Abandoned), next.Semantics.mode(), next.NoDefer, next.Retention.Seen, next.ListCap, next.PageCap)
			}
			if i >= 8 { // past first contact and the learning of the semantics
				calls += rep.Calls
				polls++
			}
			st = next
			clock.Advance(time.Second)
		}
		// Quiet: everything completes and is read.
		sim.SetRate(0)
		for i := 0; i < 30; i++ {
			clock.Advance(10 * time.Second)
			next, _, err := Poll(context.Background(), con, st, Options{Now: clock.Now})
			if err != nil {
				t.Fatal(err)
			}
			st = next
		}
		var want uint64
		for _, e := range sim.Truth(node) {
			if e.CompletedAt > contact && e.CompletedAt <= clock.Now().UnixMilli() && !e.Aborted {
				want++
			}
		}
		if got := sum(st.Events); got != want || st.Reported != want {
			t.Errorf("count-running=%v: counted %d, reported %d, want %d", countRunning, got, st.Reported, want)
		}
		if perPoll := float64(calls) / float64(polls); perPoll > 2.05 {
			t.Errorf("count-running=%v: %.2f calls a poll under load, want 2", countRunning, perPoll)
		}
	}
}
