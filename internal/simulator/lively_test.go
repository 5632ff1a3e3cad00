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
