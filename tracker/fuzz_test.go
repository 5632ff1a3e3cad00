package tracker

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/tally"
)

// A node's state is read from the state file at every start: whatever it
// holds (a truncated write, an older format, a hand edit, garbage), Repair
// makes it usable and two polls against the in-process console model run
// on it without panicking, then it is written back. Everything is in-process
// and deterministic (no socket, no goroutine), so the fuzzer explores at
// thousands of executions a second.
func FuzzReadState(f *testing.F) {
	clock := simulator.NewManualClock(testEpoch)
	sim := simulator.New(simulator.Config{Clock: clock, Seed: 21, Rate: 2, Nodes: []simulator.NodeConfig{{Host: "core-1"}}})
	con := newSimConsole(sim, sim.Nodes()[0])
	st := &State{}
	for i := 0; i < 4; i++ {
		next, _, err := Poll(context.Background(), con, st, Options{Now: clock.Now, Window: 2 * time.Minute})
		if err != nil {
			f.Fatal(err)
		}
		st = next
		clock.Advance(40 * time.Second)
	}
	saved, err := json.Marshal(st)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(saved)
	f.Add(saved[:len(saved)/2])
	f.Add([]byte(`{"contacted":true,"cursor":-5,"seen":{"floor":9e18}}`))
	f.Add([]byte(`{"contacted":true,"cursor":1795253400000,"seen":{"floor":1795253280000,"entries":{"123":{"date":1795253300000,"count":3}}}}`))
	f.Add([]byte(`{"contacted":true,"durations":{"TABLE_LOADED":null},"pending":{"x":{"n":-3}},"events":{"TABLE_LOADED":1}}`))
	f.Add([]byte(`{"contacted":true,"cursor":1,"floor":5,"known":{"entries":"AAAA","baseline":"!!"}}`))
	f.Add([]byte(`{"contacted":true,"unread":{"from":9,"to":1,"set":true},"semantics":{"score":99,"mode":"x"}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var st State
		if err := json.Unmarshal(data, &st); err != nil {
			return
		}
		st.Repair(tally.Limits{MaxNames: 50, MaxEventTypes: 8})
		clock := simulator.NewManualClock(testEpoch.Add(3 * time.Minute))
		sim := simulator.New(simulator.Config{Clock: clock, Seed: 21, Rate: 2, Nodes: []simulator.NodeConfig{{Host: "core-1"}}})
		con := newSimConsole(sim, sim.Nodes()[0])
		cur := &st
		for i := 0; i < 2; i++ {
			next, _, err := Poll(context.Background(), con, cur, Options{Now: clock.Now, Window: 2 * time.Minute})
			if err == nil {
				cur = next
			}
			clock.Advance(30 * time.Second)
		}
		if _, err := json.Marshal(cur); err != nil {
			t.Errorf("writing back a restored state: %v", err)
		}
	})
}
