package collector

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// lateScenario: three nodes, a scrape every second, short events (0.3 to 4
// s) that a node logs at its own clock; every one is counted once and the
// self-check balances, on consoles that list events only once completed and
// on nodes whose clocks lag the console's.
func lateScenario(t *testing.T, cfg simulator.Config, lags []time.Duration, events int) (*env, metrics) {
	t.Helper()
	for i, lag := range lags {
		cfg.Nodes = append(cfg.Nodes, simulator.NodeConfig{Host: "lag" + string(rune('a'+i)) + ".test", ClockOffset: lag})
	}
	e := newEnv(t, cfg, len(lags), testOptions{})
	shift := map[string]int64{}
	for i, n := range e.nodes {
		shift[n] = lags[i].Milliseconds()
	}
	r := rand.New(rand.NewPCG(11, 12))
	e.scrape(shift)
	var m metrics
	for step := 0; step < events+10; step++ {
		e.clock.Advance(time.Second)
		if step < events {
			for _, n := range e.nodes {
				// Started just now by the node's clock, lasting 0.3 to 4 s.
				start := e.nowMS() + shift[n] - int64(r.IntN(200))
				e.sim.Append(n, simulator.Event{Type: simulator.TableLoaded, Date: start,
					Duration: int64(300 + r.IntN(3700)), Comment: "sales.orders"})
			}
		}
		m = e.scrape(shift)
		e.checkTruth(m, nil)
	}
	for i, n := range e.nodes {
		var counted float64
		for _, s := range m.series("indexima_events_total", l("node", n)) {
			counted += s.value
		}
		if counted < float64(events) {
			t.Errorf("node %s (clock %v): %v events counted, want at least %d", n, lags[i], counted, events)
		}
		if got := m.value(t, "indexima_events_reported_total", l("node", n)); got != counted {
			t.Errorf("node %s (clock %v): reported %v, counted %v", n, lags[i], got, counted)
		}
	}
	return e, m
}

// Issue "Exact on every console": a console that lists an event only once
// it completes, dated at its start, with runnings empty (the new user's
// trial counted 12 of 36 events per node and reported 12).
func TestCompletedOnlyConsoleCountsEveryEvent(t *testing.T) {
	cfg := simulator.Config{}
	if err := cfg.ApplyProfile("completed-only"); err != nil {
		t.Fatal(err)
	}
	lateScenario(t, cfg, []time.Duration{0, 0, 0}, 36)
}

// Issue "Right from first contact": nodes 0, 20 and 90 s behind the
// console's clock, which stamps `last`: every event counted once, the
// self-check balanced, and the lag gauge shows each node's lag.
func TestLaggingNodeClocks(t *testing.T) {
	for _, profile := range []string{"console-clock", "console-clock-completed-only"} {
		t.Run(profile, func(t *testing.T) {
			cfg := simulator.Config{}
			if err := cfg.ApplyProfile(profile); err != nil {
				t.Fatal(err)
			}
			lags := []time.Duration{0, -20 * time.Second, -90 * time.Second}
			e, m := lateScenario(t, cfg, lags, 30)
			for i, n := range e.nodes {
				got := m.value(t, "indexima_node_clock_lag_seconds", l("node", n))
				if want := -lags[i].Seconds(); math.Abs(got-want) > 1.5 {
					t.Errorf("node %s: clock lag %vs, want %vs", n, got, want)
				}
			}
		})
	}
}
