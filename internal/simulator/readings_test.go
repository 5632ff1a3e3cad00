package simulator

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// rawListing GETs a listing and decodes it without requiring every field
// (the runnings reading "absent" leaves one out).
func rawListing(t *testing.T, s *Simulator, tok, node, path string) (l wireListing, a answer) {
	t.Helper()
	a = call(t, s, path, reqOpts{token: tok, node: node, gzip: true})
	if a.status != http.StatusOK {
		t.Fatalf("%s: status %d: %s", path, a.status, a.body)
	}
	if err := json.NewDecoder(bytes.NewReader(a.body)).Decode(&l); err != nil {
		t.Fatalf("%s: %v: %s", path, err, a.body)
	}
	return l, a
}

func countOf(t *testing.T, s *Simulator, tok string, start, end int64) int64 {
	t.Helper()
	a := call(t, s, "/api/monitor/get/event/count/"+itoa(start)+"/"+itoa(end), reqOpts{token: tok, node: nodeA})
	var n int64
	if err := json.Unmarshal(a.body, &n); err != nil {
		t.Fatalf("count: %v: %s", err, a.body)
	}
	return n
}

func TestLastReadings(t *testing.T) {
	at := t0.Add(time.Second)
	for _, tc := range []struct {
		reading     LastReading
		want, empty int64 // `last` of a listing with events, and of one without
	}{
		{LastNodeClock, ms(at.Add(time.Minute)) - 30_000, ms(at.Add(time.Minute)) - 30_000},
		{LastConsoleClock, ms(at.Add(time.Minute)), ms(at.Add(time.Minute))},
		{LastNewest, ms(at) + 5, ms(at.Add(time.Hour))}, // newest returned; :time echoed
		{LastAhead, ms(at.Add(time.Minute)) + 24*3600*1000, ms(at.Add(time.Minute)) + 24*3600*1000},
	} {
		s, clk := newTestSim(t, Config{Readings: Readings{Last: tc.reading},
			Nodes: []NodeConfig{{Host: "node-a", ClockOffset: -30 * time.Second}}})
		tok := login(t, s)
		s.Append(nodeA, ev("x", at, 0), ev("y", at.Add(5*time.Millisecond), 0))
		clk.Set(at.Add(time.Minute))
		if l := listing(t, s, tok, nodeA, "/api/monitor/get/lastevents/"+itoa(ms(at))); *l.Last != tc.want {
			t.Errorf("%q: last %d, want %d", tc.reading, *l.Last, tc.want)
		}
		if l := listing(t, s, tok, nodeA, "/api/monitor/get/lastevents/"+itoa(ms(at.Add(time.Hour)))); *l.Last != tc.empty {
			t.Errorf("%q: last of an empty listing %d, want %d", tc.reading, *l.Last, tc.empty)
		}
	}
}

func TestRunningsReadings(t *testing.T) {
	at := t0.Add(time.Second)
	for _, r := range []RunningsReading{RunningsListed, RunningsEmpty, RunningsAbsent} {
		s, clk := newTestSim(t, Config{Readings: Readings{Runnings: r}})
		tok := login(t, s)
		s.Append(nodeA, ev("long", at, time.Minute), ev("short", at, time.Millisecond))
		clk.Set(at.Add(time.Second))
		l, a := rawListing(t, s, tok, nodeA, "/api/monitor/get/lastevents/"+itoa(ms(at)))
		if got := comments(l.Reqs); !sameStrings(got, []string{"short"}) {
			t.Errorf("%q: reqs %v", r, got)
		}
		hasField := strings.Contains(string(a.body), `"runnings"`)
		switch r {
		case RunningsListed:
			if got := comments(l.Runnings); !sameStrings(got, []string{"long"}) {
				t.Errorf("listed: runnings %v", got)
			}
		case RunningsEmpty:
			if !hasField || len(l.Runnings) != 0 {
				t.Errorf("empty: %s", a.body)
			}
		case RunningsAbsent:
			if hasField {
				t.Errorf("absent: %s", a.body)
			}
		}
	}
}

func TestBoundsReadings(t *testing.T) {
	at := t0.Add(time.Second)
	lo, hi := ms(at), ms(at)+10
	for _, tc := range []struct {
		reading  BoundsReading
		count    int64
		comments []string
	}{
		{BoundsInclusive, 3, []string{"lo", "mid", "hi"}},
		{BoundsExclusive, 1, []string{"mid"}},
		{BoundsStartExclusive, 2, []string{"mid", "hi"}},
		{BoundsEndExclusive, 2, []string{"lo", "mid"}},
	} {
		s, clk := newTestSim(t, Config{Readings: Readings{Bounds: tc.reading}})
		tok := login(t, s)
		s.Append(nodeA, ev("lo", at, 0), ev("mid", at.Add(5*time.Millisecond), 0), ev("hi", at.Add(10*time.Millisecond), 0))
		clk.Set(at.Add(time.Second))
		if n := countOf(t, s, tok, lo, hi); n != tc.count {
			t.Errorf("%q: count %d, want %d", tc.reading, n, tc.count)
		}
		if got := comments(listing(t, s, tok, nodeA, "/api/monitor/get/event/asc/"+itoa(lo)+"/"+itoa(hi)+"/10").Reqs); !sameStrings(got, tc.comments) {
			t.Errorf("%q: asc %v, want %v", tc.reading, got, tc.comments)
		}
		if n := s.EventCount(nodeA, lo, hi); n != tc.count {
			t.Errorf("%q: in-process count %d, want %d", tc.reading, n, tc.count)
		}
	}
}

func TestCapKeepsOldestOrNewest(t *testing.T) {
	at := t0.Add(time.Second)
	for _, tc := range []struct {
		rd   Readings
		want []string
	}{
		{Readings{ListingCap: 2}, []string{"1", "2"}},
		{Readings{ListingCap: 2, CapKeepsNewest: true}, []string{"3", "4"}},
		{Readings{ListingCap: 2, NewestFirst: true}, []string{"2", "1"}},
		{Readings{ListingCap: 2, NewestFirst: true, CapKeepsNewest: true}, []string{"4", "3"}},
	} {
		s, clk := newTestSim(t, Config{Readings: tc.rd})
		tok := login(t, s)
		for i := 1; i <= 4; i++ {
			s.Append(nodeA, ev(itoa(int64(i)), at.Add(time.Duration(i)*time.Millisecond), 0))
		}
		clk.Set(at.Add(time.Second))
		if got := comments(listing(t, s, tok, nodeA, "/api/monitor/get/lastevents/"+itoa(ms(at))).Reqs); !sameStrings(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.rd, got, tc.want)
		}
	}
}

func TestRetentionForgetsForGood(t *testing.T) {
	at := t0.Add(time.Second)
	for _, rd := range []Readings{{RetainFor: time.Minute}, {RetainLast: 2}} {
		s, clk := newTestSim(t, Config{Readings: rd})
		tok := login(t, s)
		s.Append(nodeA, ev("old", at, 0), ev("mid", at.Add(50*time.Second), 0), ev("new", at.Add(70*time.Second), 0))
		clk.Set(at.Add(80 * time.Second))
		path := "/api/monitor/get/lastevents/" + itoa(ms(at))
		if got := comments(listing(t, s, tok, nodeA, path).Reqs); !sameStrings(got, []string{"mid", "new"}) {
			t.Errorf("%s: %v", rd, got)
		}
		if n := countOf(t, s, tok, ms(at), ms(at)+3600_000); n != 2 {
			t.Errorf("%s: count %d, want 2", rd, n)
		}
		s.SetReadings(Readings{}) // retention off: what was forgotten stays so
		if got := comments(listing(t, s, tok, nodeA, path).Reqs); !sameStrings(got, []string{"mid", "new"}) {
			t.Errorf("%s, then none: %v", rd, got)
		}
		if v := s.Visible(nodeA); len(v) != 2 {
			t.Errorf("%s: visible %v", rd, v)
		}
	}
}

func TestAbortOnStop(t *testing.T) {
	at := t0.Add(time.Second)
	for _, countRunning := range []bool{false, true} {
		s, clk := newTestSim(t, Config{Readings: Readings{AbortOnStop: true, CountRunning: countRunning}})
		tok := login(t, s)
		s.Append(nodeA, ev("long", at, time.Hour))
		clk.Set(at.Add(time.Second))
		if l := listing(t, s, tok, nodeA, "/api/monitor/get/lastevents/"+itoa(ms(at))); len(l.Runnings) != 1 {
			t.Fatalf("running before the stop: %v", comments(l.Runnings))
		}
		s.StopCluster()
		clk.Set(at.Add(2 * time.Hour))
		l := listing(t, s, tok, nodeA, "/api/monitor/get/lastevents/"+itoa(ms(at)))
		if got := comments(l.Reqs); len(l.Runnings) != 0 || len(got) != 1 || got[0] != "" {
			t.Errorf("count-running=%v: after the stop: reqs %v runnings %v (want only the stop)", countRunning, got, comments(l.Runnings))
		}
		want := int64(1) // the stop
		if countRunning {
			want++ // the aborted event started and never completed
		}
		if n := countOf(t, s, tok, ms(at), ms(at.Add(3*time.Hour))); n != want {
			t.Errorf("count-running=%v: count %d, want %d", countRunning, n, want)
		}
	}
}

func TestDateHeaderIsTheConsoleClock(t *testing.T) {
	s, _ := newTestSim(t, Config{})
	tok := login(t, s)
	a := call(t, s, "/api/monitor/get/event/count/0/1", reqOpts{token: tok, node: nodeA})
	if d, err := http.ParseTime(a.header.Get("Date")); err != nil || !d.Equal(t0) {
		t.Errorf("Date %q (%v), want the simulated %v", a.header.Get("Date"), err, t0)
	}
	s.SetReadings(Readings{NoDate: true})
	if a := call(t, s, "/api/monitor/get/event/count/0/1", reqOpts{token: tok, node: nodeA}); a.header.Get("Date") != "" {
		t.Errorf("no-date: Date %q", a.header.Get("Date"))
	}
}

// A reading changed while serving (an upgrade of the console) applies to
// the next answers, through the admin API too.
func TestReadingsChangeWhileServing(t *testing.T) {
	s, clk := newTestSim(t, Config{})
	s.EnableAdmin()
	tok := login(t, s)
	at := t0.Add(time.Second)
	s.Append(nodeA, ev("long", at, time.Hour))
	clk.Set(at.Add(time.Second))
	if n := countOf(t, s, tok, ms(at), ms(at)+1000); n != 0 {
		t.Fatalf("completed-only count: %d", n)
	}
	resp, err := http.PostForm(s.URL()+"/sim/readings?"+url.Values{"count-running": {"true"}, "last": {"newest"}}.Encode(), nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("admin readings: %v %v", resp, err)
	}
	resp.Body.Close()
	if n := countOf(t, s, tok, ms(at), ms(at)+1000); n != 1 {
		t.Errorf("after the upgrade: count %d, want 1", n)
	}
	if r := s.Readings(); !r.CountRunning || r.Last != LastNewest {
		t.Errorf("readings %s", r)
	}
	resp, err = http.PostForm(s.URL()+"/sim/readings?bounds=sideways", nil)
	if err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a bad reading: %v %v", resp, err)
	}
	resp.Body.Close()
}

// The Date header's reading is named date, as the simulator's flag; no-date,
// its old spelling, says the opposite.
func TestDateReadingParams(t *testing.T) {
	for _, tc := range []struct {
		params map[string][]string
		noDate bool
	}{
		{map[string][]string{"date": {"false"}}, true},
		{map[string][]string{"date": {"true"}}, false},
		{map[string][]string{"no-date": {"true"}}, true},
	} {
		r, err := ApplyReadingParams(Readings{NoDate: !tc.noDate}, tc.params)
		if err != nil || r.NoDate != tc.noDate {
			t.Errorf("%v: NoDate %v (%v), want %v", tc.params, r.NoDate, err, tc.noDate)
		}
	}
}
