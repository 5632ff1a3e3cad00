package tracker

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/event"
	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// downReads counts the NODE_DOWN events a console hands the engine: a
// test proves with it that a report was read again.
type downReads struct {
	Console
	reads map[int64]int // by date
}

func (c *downReads) List(ctx context.Context, q event.Query, h event.Handler) (ListingInfo, error) {
	return c.Console.List(ctx, q, downCounter{h, c.reads})
}

type downCounter struct {
	event.Handler
	reads map[int64]int
}

func (d downCounter) Event(e event.Event) error {
	if e.Type == "NODE_DOWN" {
		d.reads[e.Date]++
	}
	return d.Handler.Event(e)
}

// numbers is a DownNodeNamer of a configuration: the name of each number.
type numbers map[string]string

func (m *numbers) name(key string) string {
	if n, ok := (*m)[key]; ok {
		return n
	}
	return key
}

// A report is named when the engine first reads it, and keeps that name:
// once a reload gives its number to another node, reading it again (the
// listing's slack, a restart with the state) learns nothing under the new
// name, while a report read after the reload takes it.
func TestNodeDownNamedWhenFirstRead(t *testing.T) {
	clock := simulator.NewManualClock(testEpoch)
	sim := simulator.New(simulator.Config{Clock: clock, Nodes: []simulator.NodeConfig{{Host: "n1"}}})
	node := sim.Nodes()[0]
	con := &downReads{Console: newSimConsole(sim, node), reads: map[int64]int{}}
	config := numbers{"3": "c"}
	opts := Options{Now: clock.Now, DownNodeName: config.name, HandOut: HandOutAll}
	poll := func(st *State) (*State, Report) {
		t.Helper()
		next, rep, err := Poll(context.Background(), con, st, opts)
		if err != nil {
			t.Fatal(err)
		}
		return next, rep
	}
	report := func(age time.Duration) int64 {
		d := clock.Now().Add(-age).UnixMilli()
		sim.Append(node, simulator.Event{Type: simulator.NodeDown, Date: d, Duration: 3, Comment: "3"})
		return d
	}

	before := report(10 * time.Minute) // learned by the look-back, as c
	clock.Advance(time.Second)
	st, _ := poll(&State{})
	if st.NodeDownLast["c"] != before || st.Schema != Schema {
		t.Fatalf("first contact: latest reports %v, schema %d; want c at %d, schema %d", st.NodeDownLast, st.Schema, before, Schema)
	}
	clock.Advance(10 * time.Second)
	counted := report(500 * time.Millisecond)
	clock.Advance(time.Second)
	st, rep := poll(st)
	if st.NodeDown["c"] != 1 || st.NodeDownLast["c"] != counted || len(rep.Events) != 1 || rep.Events[0].DownNode != "c" {
		t.Fatalf("counted as %v, latest %v, handed out %+v; want one report of c at %d", st.NodeDown, st.NodeDownLast, rep.Events, counted)
	}

	// The reload: 3 is d now. The next listing starts within its slack
	// behind the cursor, which is the report's date: it reads it again.
	config = numbers{"3": "d"}
	reads := con.reads[counted]
	clock.Advance(time.Second)
	st, _ = poll(st)
	if con.reads[counted] == reads {
		t.Fatal("the poll after the reload did not read the report again: the test proves nothing")
	}
	wantOnlyC := func(when string, st *State) {
		t.Helper()
		if _, ok := st.NodeDownLast["d"]; ok || st.NodeDown["d"] != 0 || st.NodeDown["c"] != 1 || st.NodeDownLast["c"] != counted {
			t.Errorf("%s: counted %v, latest %v; want c's report alone, nothing of d", when, st.NodeDown, st.NodeDownLast)
		}
	}
	wantOnlyC("read again after the reload", st)

	// A restart with the state: its first listing reads the report again.
	b, err := st.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	back.Repair(opts.withDefaults().Limits)
	back.Upgrade(config.name)
	reads = con.reads[counted]
	clock.Advance(time.Second)
	st, _ = poll(&back)
	if con.reads[counted] == reads {
		t.Fatal("the poll after the restart did not read the report again: the test proves nothing")
	}
	wantOnlyC("read again after a restart with the state", st)

	// A report read after the reload is d's.
	clock.Advance(10 * time.Second)
	after := report(500 * time.Millisecond)
	clock.Advance(time.Second)
	st, rep = poll(st)
	if st.NodeDown["d"] != 1 || st.NodeDownLast["d"] != after || st.NodeDown["c"] != 1 || rep.Events[0].DownNode != "d" {
		t.Errorf("after a report of d: counted %v, latest %v, handed out %+v", st.NodeDown, st.NodeDownLast, rep.Events)
	}
}

// A state of an earlier version (no schema: its reports keyed by number,
// no dates of the latest reports, as cde582f wrote it) is named once with
// the configuration at restore, and its next poll learns the latest
// reports again by a look-back: those counted before the upgrade, and
// those logged before the first contact. Nothing is counted twice. A
// look-back that fails holds back neither the poll nor a later try.
func TestStateOfAnEarlierSchemaRelearnsTheLatestReports(t *testing.T) {
	clock := simulator.NewManualClock(testEpoch)
	sim := simulator.New(simulator.Config{Clock: clock, Nodes: []simulator.NodeConfig{{Host: "n1"}}})
	node := sim.Nodes()[0]
	con := newSimConsole(sim, node)
	opts := Options{Now: clock.Now} // the earlier version: no names
	poll := func(st *State) *State {
		t.Helper()
		next, _, err := Poll(context.Background(), con, st, opts)
		if err != nil {
			t.Fatal(err)
		}
		return next
	}
	report := func(down string) int64 {
		d := clock.Now().Add(-300 * time.Millisecond).UnixMilli()
		sim.Append(node, simulator.Event{Type: simulator.NodeDown, Date: d, Duration: 3, Comment: down})
		return d
	}
	seven := report("7") // before first contact: only a look-back finds it
	clock.Advance(time.Minute)
	st := poll(&State{})
	var three int64
	for range 3 {
		clock.Advance(20 * time.Second)
		three = report("3")
		report("5")
		clock.Advance(time.Second)
		st = poll(st)
	}
	if st.NodeDown["3"] != 3 || st.NodeDown["5"] != 3 {
		t.Fatalf("counted %v, want 3 reports of 3 and of 5", st.NodeDown)
	}

	// Saved as the earlier version saved it.
	b, err := st.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	delete(fields, "schema")
	delete(fields, "node_down_last")
	b, _ = json.Marshal(fields)
	var old State
	if err := json.Unmarshal(b, &old); err != nil {
		t.Fatal(err)
	}
	counts := fmt.Sprint(st.Events)

	// Restored by this version, whose configuration gives 3 a name.
	config := numbers{"3": "core-3"}
	opts.DownNodeName = config.name
	old.Repair(opts.withDefaults().Limits)
	old.Upgrade(config.name)
	if fmt.Sprint(old.NodeDown) != "map[5:3 core-3:3]" || !old.RelearnNodeDown || old.Schema != Schema || len(old.NodeDownLast) != 0 {
		t.Fatalf("upgraded: counted %v, relearn %v, schema %d, latest %v", old.NodeDown, old.RelearnNodeDown, old.Schema, old.NodeDownLast)
	}
	other := numbers{"3": "other"}
	old.Upgrade(other.name) // once only
	if old.NodeDown["core-3"] != 3 {
		t.Fatalf("upgraded twice: %v", old.NodeDown)
	}

	// A look-back that fails: the poll stands, the look-back waits.
	con.fail = func(_ int, q *event.Query) error {
		if q != nil && !q.IsSince() && q.Order == event.Desc {
			return errInjected
		}
		return nil
	}
	clock.Advance(time.Second)
	st = poll(&old)
	if !st.RelearnNodeDown || len(st.NodeDownLast) != 0 {
		t.Fatalf("a failed look-back: relearn %v, latest %v; want it left to the next poll", st.RelearnNodeDown, st.NodeDownLast)
	}
	con.fail = nil
	clock.Advance(time.Second)
	st = poll(st)
	want := fmt.Sprint(map[string]int64{"core-3": three, "5": three, "7": seven})
	if got := fmt.Sprint(st.NodeDownLast); got != want || st.RelearnNodeDown {
		t.Errorf("relearned %s (relearn still %v), want %s", got, st.RelearnNodeDown, want)
	}
	if fmt.Sprint(st.NodeDown) != "map[5:3 core-3:3]" || fmt.Sprint(st.Events) != counts {
		t.Errorf("after the look-back: counted %v, events %v; want nothing counted again", st.NodeDown, st.Events)
	}
	calls := con.calls
	clock.Advance(time.Second)
	poll(st)
	if con.calls-calls > 2 {
		t.Errorf("the poll after the look-back made %d calls: it looked back again", con.calls-calls)
	}
}

// A look-back cut by the scrape's deadline after its first page keeps
// what it read and is not tried again.
func TestRelearnCutByTheDeadlineStands(t *testing.T) {
	clock := simulator.NewManualClock(testEpoch)
	sim := simulator.New(simulator.Config{Clock: clock, Nodes: []simulator.NodeConfig{{Host: "n1"}}})
	node := sim.Nodes()[0]
	con := newSimConsole(sim, node)
	date := clock.Now().Add(-time.Second).UnixMilli()
	sim.Append(node, simulator.Event{Type: simulator.NodeDown, Date: date, Duration: 3, Comment: "2"})
	opts := Options{Now: clock.Now}
	st, _, err := Poll(context.Background(), con, &State{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	// The dates lost (as Repair drops them beyond the label bound).
	st = st.Clone()
	st.Own()
	st.NodeDownLast, st.RelearnNodeDown = nil, true
	clock.Advance(time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pages := 0
	con.fail = func(_ int, q *event.Query) error {
		if q != nil && !q.IsSince() && q.Order == event.Desc {
			if pages++; pages == 2 {
				cancel()
				return context.Canceled
			}
		}
		return nil
	}
	next, _, err := Poll(ctx, con, st, opts)
	if err != nil {
		t.Fatal(err)
	}
	if pages != 2 {
		t.Fatalf("%d pages asked: the look-back was not cut after its first", pages)
	}
	if next.RelearnNodeDown || next.NodeDownLast["2"] != date {
		t.Errorf("cut after its first page: relearn %v, latest %v; want it done, 2 at %d", next.RelearnNodeDown, next.NodeDownLast, date)
	}
}

// A first contact taken again because the cursor stood ahead of the
// console's clock (guard.go) reads back over reports it had read and named
// before: after a reload gave their number to another node, it does not
// learn them again under the new name. A report it reads for the first
// time is named now.
func TestNodeDownNotRenamedByARepair(t *testing.T) {
	clock := simulator.NewManualClock(testEpoch)
	sim := simulator.New(simulator.Config{Clock: clock, Nodes: []simulator.NodeConfig{{Host: "n1"}}})
	node := sim.Nodes()[0]
	con := &downReads{Console: newSimConsole(sim, node), reads: map[int64]int{}}
	config := numbers{"3": "c"}
	opts := Options{Now: clock.Now, DownNodeName: config.name}
	st, _, err := Poll(context.Background(), con, &State{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(10 * time.Second)
	counted := clock.Now().Add(-500 * time.Millisecond).UnixMilli()
	sim.Append(node, simulator.Event{Type: simulator.NodeDown, Date: counted, Duration: 3, Comment: "3"})
	clock.Advance(time.Second)
	if st, _, err = Poll(context.Background(), con, st, opts); err != nil {
		t.Fatal(err)
	}

	config = numbers{"3": "d"}
	st = st.Clone()
	st.Cursor += 2 * 24 * time.Hour.Milliseconds() // ahead of the console, no event behind it
	reads := con.reads[counted]
	clock.Advance(time.Second)
	next, rep, err := Poll(context.Background(), con, st, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Repaired || con.reads[counted] == reads {
		t.Fatalf("repaired %v, report read again %v: the test proves nothing", rep.Repaired, con.reads[counted] > reads)
	}
	if _, ok := next.NodeDownLast["d"]; ok || next.NodeDownLast["c"] != counted || next.NodeDown["c"] != 1 {
		t.Errorf("after the repair: counted %v, latest %v; want c's report alone", next.NodeDown, next.NodeDownLast)
	}
}
