package tracker

import (
	"encoding/json"
	"fmt"
	"testing"
)

// The known events are a multiset: a response holding an event k times
// when c are known brings k-c new ones, whatever the order of responses;
// overlapping responses (the boundary millisecond of pages) bring nothing
// twice.
func TestKnownMultiset(t *testing.T) {
	var k known
	var r response
	a, b := kEntry{date: 10, fp: 1}, kEntry{date: 10, fp: 2}
	var places []int // of the new occurrences of the latest response
	news := func(es ...kEntry) int {
		n := 0
		places = nil
		for _, e := range es {
			if nth := k.observe(&r, e); nth > 0 {
				n++
				places = append(places, nth)
			}
		}
		k.end(&r)
		return n
	}
	if got := news(a, a, b); got != 3 || fmt.Sprint(places) != "[1 2 1]" {
		t.Fatalf("first response: %d new at places %v, want 3 at [1 2 1]", got, places)
	}
	if got := news(a, b); got != 0 {
		t.Fatalf("a response with fewer of them: %d new, want 0", got)
	}
	// The third identical event is the third, whichever response shows it.
	if got := news(a, a, a); got != 1 || fmt.Sprint(places) != "[3]" {
		t.Fatalf("a third identical event: %d new at places %v, want 1 at [3]", got, places)
	}
	if got := k.count(a); got != 3 {
		t.Fatalf("a known %d times, want 3", got)
	}
	// A large response merged while it is read (flush) counts the same.
	for i := 0; i < 3; i++ {
		k.observe(&r, kEntry{date: 20, fp: 9})
		k.flush(&r)
	}
	if nth := k.observe(&r, kEntry{date: 20, fp: 9}); nth != 4 {
		t.Fatalf("the fourth identical event over flushes is new at place %d, want 4", nth)
	}
	k.end(&r)
	if got := k.count(kEntry{date: 20, fp: 9}); got != 4 {
		t.Fatalf("four identical events over flushes known %d times", got)
	}
	// Late events merge in date order; range counts and trimming.
	if got := news(kEntry{date: 5, fp: 3}, kEntry{date: 15, fp: 3}); got != 2 {
		t.Fatalf("late events: %d new", got)
	}
	if got := k.countRange(5, 15); got != 6 {
		t.Fatalf("countRange(5, 15) = %d, want 6", got)
	}
	k.addBaseline([]int64{5, 10})
	removed, baseline := k.trimBelow(10)
	if removed != 1 || baseline != 1 || k.countRange(0, maxInt64) != 9 || k.baselineFrom(0) != 1 {
		t.Fatalf("trim: removed %d (baseline %d), %d left", removed, baseline, k.countRange(0, maxInt64))
	}
	// The compact saved form reads back the same.
	enc, err := json.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	var back known
	if err := json.Unmarshal(enc, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.entries) != len(k.entries) || back.count(a) != 3 || back.baselineFrom(0) != 1 {
		t.Fatalf("saved %s, read back %+v", enc, back)
	}
	for _, bad := range []string{`{"entries":"!!"}`, `{"entries":"gA=="}`, `{"entries":"","baseline":"%"}`} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("%s read without error", bad)
		}
	}
}
