package tracker

import (
	"context"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// The soak's loss on main before the engine: a listing too large to read
// (a decompression bomb) made the poll read the interval in pages, a path
// that skipped the running events and still moved the cursor over them, so
// an event running inside the interval was never counted. Here, exactly
// that: an event runs across a poll whose listing is refused as too large.
func TestRunningEventAcrossATooLargeListing(t *testing.T) {
	for _, profile := range simulator.ProfileNames() {
		t.Run(profile, func(t *testing.T) {
			clock := simulator.NewManualClock(testEpoch)
			cfg := simulator.Config{Clock: clock, Nodes: []simulator.NodeConfig{{Host: "n1"}}}
			if err := cfg.ApplyProfile(profile); err != nil {
				t.Fatal(err)
			}
			sim := simulator.New(cfg)
			node := sim.Nodes()[0]
			con := newSimConsole(sim, node)
			opts := Options{Now: clock.Now}
			st, _, err := Poll(context.Background(), con, &State{}, opts)
			if err != nil {
				t.Fatal(err)
			}
			poll := func() Report {
				t.Helper()
				next, rep, err := Poll(context.Background(), con, st, opts)
				if err != nil {
					t.Fatal(err)
				}
				st = next
				return rep
			}
			// A long load starts; the next poll sees it running (or, on a
			// console that lists only completed events, sees nothing).
			now := clock.Now().UnixMilli()
			sim.Append(node, simulator.Event{Type: simulator.TableLoaded, Date: now + 500, Duration: 40_000, Comment: "big.table"})
			clock.Advance(5 * time.Second)
			poll()
			// Many events while the load runs: the next listing is refused.
			var burst []simulator.Event
			for i := 0; i < 300; i++ {
				burst = append(burst, simulator.Event{Type: simulator.SaveMetadata, Date: now + 6000 + int64(i), Duration: 1, Comment: "1"})
			}
			sim.Append(node, burst...)
			con.tooLarge = 100
			clock.Advance(10 * time.Second)
			if rep := poll(); !rep.Searched {
				t.Fatalf("a refused listing was not read in pages: %+v", rep)
			}
			// The load completes, dated before the cursor.
			for i := 0; i < 4; i++ {
				clock.Advance(15 * time.Second)
				poll()
			}
			if got := st.Events["TABLE_LOADED"]; got != 1 {
				t.Errorf("the load running across the refused listing counted %d times, want 1", got)
			}
			if got := st.Events["SAVE_METADATA"]; got != 300 {
				t.Errorf("the refused interval's events counted %d, want 300", got)
			}
			if st.Reported != sum(st.Events) {
				t.Errorf("reported %d, counted %d", st.Reported, sum(st.Events))
			}
		})
	}
}

// The self-check sees a loss: a console that counts an event but never
// lists it (lost by the console, or by a listing bug) makes reported exceed
// counted by exactly that event, and by nothing on any other node.
func TestSelfCheckShowsAnEventNeverListed(t *testing.T) {
	for _, profile := range simulator.ProfileNames() {
		t.Run(profile, func(t *testing.T) {
			clock := simulator.NewManualClock(testEpoch)
			cfg := simulator.Config{Clock: clock, Seed: 3, Rate: 1, Nodes: []simulator.NodeConfig{{Host: "n1"}}}
			if err := cfg.ApplyProfile(profile); err != nil {
				t.Fatal(err)
			}
			sim := simulator.New(cfg)
			node := sim.Nodes()[0]
			con := newSimConsole(sim, node)
			opts := Options{Now: clock.Now}
			st := &State{}
			poll := func() {
				t.Helper()
				next, _, err := Poll(context.Background(), con, st, opts)
				if err != nil {
					t.Fatal(err)
				}
				st = next
			}
			poll()
			for i := 0; i < 20; i++ {
				clock.Advance(3 * time.Second)
				poll()
			}
			sim.SetRate(0)
			clock.Advance(10 * time.Minute) // every background event completes
			poll()
			poll()
			if st.Reported != sum(st.Events) {
				t.Fatalf("before the loss: reported %d, counted %d", st.Reported, sum(st.Events))
			}
			lost := simulator.Event{Type: simulator.NodeDown, Date: clock.Now().UnixMilli() - 100, Duration: 5, Comment: "7"}
			sim.Append(node, lost)
			con.hide = func(e simulator.Event) bool { return e.Type == lost.Type && e.Date == lost.Date }
			for i := 0; i < 3; i++ {
				clock.Advance(time.Second)
				poll()
			}
			if d := int64(st.Reported) - int64(sum(st.Events)); d != 1 {
				t.Errorf("an event counted by the console but never listed: reported - counted = %d, want 1", d)
			}
			if st.Events["NODE_DOWN"] != 0 && st.NodeDown["7"] != 0 {
				t.Errorf("the hidden event was counted")
			}
		})
	}
}
