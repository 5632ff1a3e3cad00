package simulator

import (
	"context"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

func TestLivelyPlaysIncidentsOnTheClock(t *testing.T) {
	clk := NewManualClock(t0)
	nodes := []NodeConfig{{Host: "node-a"}, {Host: "node-b"}, {Host: "node-c"}}
	s := New(Config{Clock: clk, Nodes: nodes})
	l := NewLively(s, LivelyConfig{Clock: clk, Seed: 5, Every: time.Minute})
	l.Step(clk.Now())
	if got := len(s.Truth(nodeA)); got != len(s.Tables(nodeA))+len(s.Indexes(nodeA))+3 {
		t.Fatalf("incidents before the clock moved: %d events", got)
	}
	for i := 0; i < 6*60; i++ { // six simulated hours, 10 s at a time
		clk.Advance(10 * time.Second)
		l.Step(clk.Now())
	}
	types := map[string]int{}
	for _, node := range s.Nodes() {
		loaded := map[string]bool{}
		for _, e := range s.Truth(node) {
			types[e.Type]++
			switch e.Type {
			case HyperIndexLoaded:
				loaded[e.Comment] = true
			case HyperIndexUnloaded:
				if !loaded[e.Comment] {
					t.Errorf("%s: unload of %s, not loaded", node, e.Comment)
				}
				loaded[e.Comment] = false
			}
		}
	}
	for _, typ := range []string{NodeDown, MemoryLow, HyperIndexUnloaded, ClusterStop, PreloadFinished} {
		if types[typ] == 0 {
			t.Errorf("six hours of lively scenario without %s: %v", typ, types)
		}
	}
	// Every stop is followed by a start (the last one may still be pending);
	// the initial history holds one start per node.
	if starts := types[ClusterStart] - 3; starts != types[ClusterStop] && starts != types[ClusterStop]-3 {
		t.Errorf("%d stops but %d starts on 3 nodes", types[ClusterStop], types[ClusterStart])
	}
}

func TestStartLivelyStopsWithContext(t *testing.T) {
	s, _ := newTestSim(t, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	initial := len(s.Truth(nodeA)) + len(s.Truth(nodeB))
	done := make(chan struct{})
	l := NewLively(s, LivelyConfig{Clock: NewScaledClock(t0, 3600), Poll: time.Millisecond, Every: time.Minute})
	go func() { l.Run(ctx); close(done) }()
	// At 3600x, an incident is due every few real milliseconds.
	testkit.WaitFor(t, "a lively incident", func() bool { return len(s.Truth(nodeA))+len(s.Truth(nodeB)) > initial })
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

// Pace shortens the scenario's waits, not the clock: with the same seed, a
// tenth of the pace plays the first incident at a tenth of the time, and
// each cluster stop is followed by its start within a tenth of the usual 10
// to 30 s of the clock.
func TestLivelyPaceShortensTheWaitsNotTheClock(t *testing.T) {
	nodes := []NodeConfig{{Host: "node-a"}, {Host: "node-b"}, {Host: "node-c"}}
	// play runs the scenario for d of simulated time, a second at a time,
	// and returns the log and when the first incident came.
	play := func(pace float64, d time.Duration) (map[string][]Event, time.Duration) {
		clk := NewManualClock(t0)
		s := New(Config{Clock: clk, Nodes: nodes})
		initial := len(s.Truth(s.Nodes()[0])) + len(s.Truth(s.Nodes()[1])) + len(s.Truth(s.Nodes()[2]))
		l := NewLively(s, LivelyConfig{Clock: clk, Seed: 7, Every: time.Minute, Pace: pace})
		first := time.Duration(-1)
		for elapsed := time.Duration(0); elapsed < d; elapsed += time.Second {
			clk.Advance(time.Second)
			l.Step(clk.Now())
			n := 0
			for _, node := range s.Nodes() {
				n += len(s.Truth(node))
			}
			if first < 0 && n > initial {
				first = elapsed + time.Second
			}
		}
		logs := map[string][]Event{}
		for _, node := range s.Nodes() {
			logs[node] = s.Truth(node)
		}
		return logs, first
	}
	_, slow := play(1, 3*time.Minute)
	fast, quick := play(0.1, 30*time.Minute)
	if slow < 30*time.Second || quick < 0 || quick > 9*time.Second {
		t.Fatalf("first incident at %v with pace 1 (want 30 to 90s) and %v with pace 0.1 (want 3 to 9s)", slow, quick)
	}
	if d := quick*10 - slow; d < -10*time.Second || d > 10*time.Second {
		t.Errorf("first incident at %v with pace 0.1, %v with pace 1: want a tenth of the time", quick, slow)
	}
	stops := 0
	for node, log := range fast {
		var stoppedAt int64 = -1
		for _, e := range log {
			switch {
			case e.Type == ClusterStop:
				stoppedAt = e.Date
				stops++
			case e.Type == ClusterStart && stoppedAt >= 0:
				if gap := time.Duration(e.Date-stoppedAt) * time.Millisecond; gap > 3*time.Second+time.Second {
					t.Errorf("%s: cluster started %v after its stop with pace 0.1, want at most 3s (+1s steps)", node, gap)
				}
				stoppedAt = -1
			}
		}
	}
	if stops == 0 {
		t.Error("30 simulated minutes at pace 0.1 (an incident every 6s or so) without a cluster stop")
	}
}
