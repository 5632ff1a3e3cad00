package tracker

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/tally"
)

// The date of the latest report of each down node is what the one-page
// alert reads (indexima_node_down_last_report_timestamp_seconds): it must
// come from counted reports, from the first-contact look-back (a restart
// without the state file knows a recent report again), survive the state
// file, keep the latest date whatever the order events are read in, and be
// bounded like the counter's down nodes.
func TestNodeDownLastReport(t *testing.T) {
	clock := simulator.NewManualClock(testEpoch)
	sim := simulator.New(simulator.Config{Clock: clock, Nodes: []simulator.NodeConfig{{Host: "n1"}}})
	node := sim.Nodes()[0]
	con := newSimConsole(sim, node)
	opts := Options{Now: clock.Now, Limits: tally.Limits{MaxNames: 2, MaxEventTypes: 32}}
	poll := func(st *State) *State {
		t.Helper()
		next, _, err := Poll(context.Background(), con, st, opts)
		if err != nil {
			t.Fatal(err)
		}
		return next
	}
	report := func(down string, age time.Duration) int64 {
		d := clock.Now().Add(-age).UnixMilli()
		sim.Append(node, simulator.Event{Type: simulator.NodeDown, Date: d, Duration: 3, Comment: down})
		return d
	}

	// Logged before the exporter's first contact: learned, not counted.
	before := report("3", 10*time.Minute)
	clock.Advance(time.Second)
	st := poll(&State{})
	if st.NodeDownLast["3"] != before || st.NodeDown["3"] != 0 {
		t.Fatalf("after first contact: last %v, counted %v; want the look-back's date %d and no count", st.NodeDownLast, st.NodeDown, before)
	}

	// Counted reports move it; an older report read later does not.
	clock.Advance(10 * time.Second)
	latest := report("3", time.Second)
	clock.Advance(time.Second)
	st = poll(st)
	clock.Advance(10 * time.Second)
	report("3", 15*time.Second) // late: dated before latest
	clock.Advance(time.Second)
	st = poll(st)
	if st.NodeDownLast["3"] != latest || st.NodeDown["3"] != 2 {
		t.Fatalf("last %v counted %v; want %d and 2 reports", st.NodeDownLast, st.NodeDown, latest)
	}

	// Bounded: a third down node beyond MaxLabelValues 2 is dropped from
	// both, and its drop counted once.
	clock.Advance(10 * time.Second)
	report("4", time.Second)
	report("5", 500*time.Millisecond)
	clock.Advance(time.Second)
	st = poll(st)
	if len(st.NodeDownLast) != 2 || len(st.NodeDown) != 2 || st.Dropped[tally.VocabDownNodes] != 1 {
		t.Fatalf("bound 2: last %v counted %v dropped %v", st.NodeDownLast, st.NodeDown, st.Dropped)
	}

	// Through the state file, the same.
	b, err := st.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	back.Repair(opts.Limits)
	if fmt.Sprint(back.NodeDownLast) != fmt.Sprint(st.NodeDownLast) {
		t.Errorf("read back %v, saved %v", back.NodeDownLast, st.NodeDownLast)
	}

	// A restart without the state file: first contact again, whose
	// look-back finds the latest report of each down node.
	fresh := poll(&State{})
	if fresh.NodeDownLast["3"] != latest || fresh.NodeDownLast["4"] == 0 || len(fresh.NodeDown) != 0 {
		t.Errorf("after a first contact again: last %v counted %v; want 3 at %d and 4 known, nothing counted", fresh.NodeDownLast, fresh.NodeDown, latest)
	}
}
