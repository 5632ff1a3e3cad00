package tracker

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// Polls an hour apart (a scrape interval that long, or scrapes missed) on
// a node busier than its console's lastevents cap: each listing is cut at
// the cap while its running events carry the cursor to the console's
// present, so the events between the cap and the cursor are left to the
// next poll. That poll comes a whole window later: whatever it leaves
// unread is behind the floor at its end. Every event must still be counted
// once, whatever the step is next to the engine's thresholds (an hour, the
// late window, is where a cut listing is deferred or searched at once).
func TestPollsAnHourApartOnACappedConsole(t *testing.T) {
	steps := []time.Duration{time.Hour - time.Second, time.Hour, time.Hour + time.Second, 90 * time.Minute}
	for _, step := range steps {
		for _, newest := range []bool{false, true} {
			t.Run(fmt.Sprintf("step=%s/cap-keeps-newest=%v", step, newest), func(t *testing.T) {
				clock := simulator.NewManualClock(testEpoch)
				sim := simulator.New(simulator.Config{Clock: clock, Seed: 11, Rate: 1,
					Readings: simulator.Readings{ListingCap: 1000, CapKeepsNewest: newest},
					Nodes:    []simulator.NodeConfig{{Host: "n1"}}})
				node := sim.Nodes()[0]
				con := newSimConsole(sim, node)
				st := &State{}
				var contact int64
				poll := func(i int) {
					t.Helper()
					next, rep, err := Poll(context.Background(), con, st, Options{Now: clock.Now})
					if err != nil {
						t.Fatalf("poll %d: %v", i, err)
					}
					if testing.Verbose() {
						t.Logf("poll %d: %+v listcut=%v listcap=%d unread=%v", i, rep, next.ListCut, next.ListCap, next.Unread)
					}
					st = next
				}
				poll(0)
				contact = clock.Now().UnixMilli()
				for i := 1; i <= 3; i++ {
					clock.Advance(time.Minute)
					poll(i)
				}
				for i := 4; i < 16; i++ {
					clock.Advance(step)
					poll(i)
				}
				// Quiet: what still runs completes and is read.
				sim.SetRate(0)
				for i := 16; i < 40; i++ {
					clock.Advance(10 * time.Second)
					poll(i)
				}
				var want uint64
				for _, e := range sim.Truth(node) {
					if e.CompletedAt > contact && e.CompletedAt <= clock.Now().UnixMilli() && !e.Aborted {
						want++
					}
				}
				if got := sum(st.Events); got != want || st.Reported != want {
					t.Errorf("counted %d, reported %d, want %d", got, st.Reported, want)
				}
			})
		}
	}
}
