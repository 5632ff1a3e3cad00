package tracker

import (
	"encoding/json"
	"testing"

	"github.com/indexima-exporter/indexima_exporter/tally"
)

// A node state of format 1 (a dedup set instead of the known events): the
// same fingerprints with their multiplicity become the known events, the
// set's floor becomes the window's, and counters and the self-check go on
// from what was saved.
func TestRepairConvertsAFormat1State(t *testing.T) {
	const v1 = `{"contacted":true,"cursor":1795253400000,"reported":40,
		"seen":{"floor":1795253280000,"entries":{
			"11":{"date":1795253300000,"count":2},
			"12":{"date":1795253390000,"count":1},
			"13":{"date":1795253100000,"count":1}}},
		"events":{"TABLE_LOADED":37,"NODE_DOWN":3},"node_down":{"2":3}}`
	var st State
	if err := json.Unmarshal([]byte(v1), &st); err != nil {
		t.Fatal(err)
	}
	st.Repair(tally.Limits{MaxNames: 500, MaxEventTypes: 32})
	if st.Legacy != nil || st.Floor != 1795253280000 || st.Origin != st.Floor {
		t.Fatalf("floor %d origin %d legacy %v, want the set's floor", st.Floor, st.Origin, st.Legacy)
	}
	if got := st.Known.count(kEntry{date: 1795253300000, fp: 11}); got != 2 {
		t.Errorf("an event counted twice is known %d times", got)
	}
	if got := st.Known.countRange(st.Floor, maxInt64); got != 3 {
		t.Errorf("%d known events, want 3 (the one below the floor dropped)", got)
	}
	if st.Events["TABLE_LOADED"] != 37 || st.NodeDown["2"] != 3 || st.Reported != 40 {
		t.Errorf("counters not kept: %v %v %d", st.Events, st.NodeDown, st.Reported)
	}
	// The books hold what was reported beside the window, so the next
	// report goes on from 40, not from the window's known events alone.
	st.report(0, unsettled{})
	if st.Reported != 40 {
		t.Errorf("reported %d after the first report, want 40", st.Reported)
	}
	st.report(2, unsettled{}) // the console counts two events the exporter has not read
	if st.Reported != 42 {
		t.Errorf("reported %d after two more events, want 42", st.Reported)
	}
	// Written and read back in format 2, the same.
	b, err := json.Marshal(&st)
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	back.Repair(tally.Limits{MaxNames: 500, MaxEventTypes: 32})
	if back.Known.countRange(back.Floor, maxInt64) != 3 || back.Floor != st.Floor || back.Check != st.Check {
		t.Errorf("format 2 round trip changed the state: %+v vs %+v", back.Check, st.Check)
	}
}
