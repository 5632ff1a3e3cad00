package apiclient

import (
	"context"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// The console's clock is read from the Date header of its answers (the
// simulator's is its simulated clock), login and errors included, and told
// later by the time elapsed since; a console whose answers carry no Date
// shows none.
func TestConsoleClockFromDateHeaders(t *testing.T) {
	sim, clock := newSim(t, nil)
	c := newClient(t, sim.URL(), nil)
	if _, _, ok := c.ConsoleClock(); ok {
		t.Fatal("a clock before any answer")
	}
	if _, err := c.EventCount(context.Background(), node1, 0, 1); err != nil {
		t.Fatal(err)
	}
	now, age, ok := c.ConsoleClock()
	if !ok || age < 0 || age > 5*time.Second {
		t.Fatalf("clock %v age %v ok %v after an answer", now, age, ok)
	}
	// Whole seconds of the simulated clock, plus what elapsed locally.
	if d := now.Sub(simStart); d < 0 || d > age+time.Millisecond {
		t.Errorf("console clock %v, want %v plus %v at most", now, simStart, age)
	}

	// A later answer moves it, an unknown node's refusal too.
	clock.Advance(90 * time.Second)
	_, _ = c.EventCount(context.Background(), Node{Host: "nowhere.example"}, 0, 1)
	if now, _, _ := c.ConsoleClock(); now.Sub(simStart) < 90*time.Second {
		t.Errorf("clock %v not moved by a later answer (an error)", now)
	}
}

func TestConsoleClockAbsent(t *testing.T) {
	sim, _ := newSim(t, func(cfg *simulator.Config) { cfg.NoDate = true })
	c := newClient(t, sim.URL(), nil)
	if _, err := c.EventCount(context.Background(), node1, 0, 1); err != nil {
		t.Fatal(err)
	}
	if now, _, ok := c.ConsoleClock(); ok {
		t.Errorf("a clock %v from answers without a Date header", now)
	}
}
