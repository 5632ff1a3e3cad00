package tracker

import (
	"context"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// A console whose answers carry no Date header, and whose clock is months
// away from the exporter's (behind or ahead): first contact cannot read
// back from a clock the console never showed, so it anchors at the newest
// event the console holds; from then on every event is counted, and
// reported equals counted. Without the anchor the window stood after (or
// before) every event: nothing counted, nothing reported, silently.
func TestNoDateConsoleFarFromTheExportersClock(t *testing.T) {
	for _, off := range []time.Duration{-240 * 24 * time.Hour, 240 * 24 * time.Hour} {
		clock := simulator.NewManualClock(testEpoch)
		sim := simulator.New(simulator.Config{Clock: clock, Seed: 5, Rate: 1,
			Readings: simulator.Readings{NoDate: true},
			Nodes:    []simulator.NodeConfig{{Host: "n1"}}})
		node := sim.Nodes()[0]
		con := newSimConsole(sim, node)
		exporterNow := func() time.Time { return clock.Now().Add(off) }
		st := &State{}
		var contact int64
		for i := 0; i < 40; i++ {
			next, _, err := Poll(context.Background(), con, st, Options{Now: exporterNow})
			if err != nil {
				t.Fatalf("exporter clock %v off, poll %d: %v", off, i, err)
			}
			if i == 0 {
				contact = clock.Now().UnixMilli()
			}
			st = next
			clock.Advance(15 * time.Second)
		}
		sim.SetRate(0)
		for i := 0; i < 30; i++ {
			clock.Advance(10 * time.Second)
			next, _, err := Poll(context.Background(), con, st, Options{Now: exporterNow})
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
		if want < 100 {
			t.Fatalf("only %d events to count: the case proves little", want)
		}
		if got := sum(st.Events); got != want || st.Reported != want {
			t.Errorf("exporter clock %v off: counted %d, reported %d, want %d", off, got, st.Reported, want)
		}
	}
}
