package faults

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// Issue 38: the clock lag read 19.75 s on idle nodes whose clocks are
// right, and -87 s after the console's and the nodes' clocks stepped back
// 90 s together. The exporter process with a state file, nodes whose
// clocks are right, 30 s behind and 25 s ahead, busy: each reads its lag
// within 2 s; through a step of every clock back 90 s, then of the first
// node's alone back 90 s, of the second node's alone ahead 90 s, and a
// SIGKILL with a restart from the state file, every reading is the lag before the step or after it, the new one
// within a few scrapes, and the counts stay exact.
func TestClockLagThroughStepsAndARestart(t *testing.T) {
	t.Parallel()
	offsets := []time.Duration{0, -30 * time.Second, 25 * time.Second}
	var nodes []simulator.NodeConfig
	for i, o := range offsets {
		nodes = append(nodes, simulator.NodeConfig{Host: fmt.Sprintf("core-%d.test", i+1), ClockOffset: o})
	}
	r := newRig(t, rigOpts{sim: simulator.Config{Seed: 38, Rate: 1, Nodes: nodes}, noStart: true})
	for i, n := range r.nodes {
		r.shift[n] = offsets[i].Milliseconds()
	}
	state := filepath.Join(r.dir, "state", "cursors.json")
	if err := os.MkdirAll(filepath.Dir(state), 0o700); err != nil {
		t.Fatal(err)
	}
	r.args = []string{"--events.state-file=" + state}
	r.start()
	r.scrape()
	truth := func(n string) float64 { return -float64(r.shift[n]) / 1000 }
	// follow scrapes once a second until every node reads its lag, for at
	// most within scrapes, and fails on a reading that is neither old's nor
	// the lag now. Every second each node logs an event (the simulator's
	// background stops while a clock runs over time it already ran).
	follow := func(when string, old map[string]float64, within int) {
		t.Helper()
		shown := map[string]bool{}
		i := 0
		for ; i < within && len(shown) < len(r.nodes); i++ {
			for _, n := range r.nodes {
				r.sim.Append(n, simulator.Event{Type: simulator.TableLoaded, Date: r.now(n) + int64(1+i*309%1000),
					Duration: int64(300 + i%3*2500), Comment: "sales.orders"})
			}
			r.advance(time.Second)
			s := r.scrape()
			for _, n := range r.nodes {
				v, ok := s.value("indexima_node_clock_lag_seconds", node(n))
				switch {
				case !ok:
				case math.Abs(v-truth(n)) <= 2:
					shown[n] = true
				case !shown[n] && math.Abs(v-old[n]) <= 2:
					// No evidence of the step yet.
				default:
					t.Fatalf("%s, scrape %d: node %s: lag %gs, want %gs (or %gs before the evidence)", when, i, n, v, truth(n), old[n])
				}
			}
		}
		for _, n := range r.nodes {
			if !shown[n] {
				t.Errorf("%s: node %s: lag %gs not shown within %d scrapes", when, n, truth(n), within)
			}
		}
		t.Logf("%s: every node's lag shown after %d scrapes", when, i)
	}
	lags := func() map[string]float64 {
		m := map[string]float64{}
		for _, n := range r.nodes {
			m[n] = truth(n)
		}
		return m
	}
	follow("from the start", nil, 10)
	// Four minutes: no clock steps back to before first contact (the
	// truth is the events completed since, by the nodes' clocks).
	r.run(240, time.Second)

	old := lags()
	r.advance(-90 * time.Second)
	follow("after every clock stepped back 90 s", old, 10)

	old = lags()
	r.shiftClock(r.nodes[0], -90*time.Second)
	follow("after the first node's clock stepped back 90 s alone", old, 10)

	old = lags()
	r.shiftClock(r.nodes[1], 90*time.Second)
	follow("after the second node's clock stepped ahead 90 s alone", old, 10)

	r.exp.kill()
	r.start()
	old = lags()
	follow("after a SIGKILL and a restart from the state file", old, 3)

	r.run(100, time.Second)
	tl := r.check(r.settle())
	t.Logf("clock steps and a restart: %s", tl)
}
