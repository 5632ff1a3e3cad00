package simulator

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// Events appended by these tests carry their name in the comment, and are
// dated after t0, past the initial history (which ends before t0).

func ev(name string, date time.Time, d time.Duration) Event {
	return Event{Type: TableLoaded, Date: ms(date), Duration: d.Milliseconds(), Comment: name}
}

func TestVersionAndColumns(t *testing.T) {
	s, _ := newTestSim(t, Config{Nodes: []NodeConfig{{Host: "node-a", Version: "2023.2.1"}, {Host: "node-b"}}})
	tok := login(t, s)
	a := call(t, s, versionPath, reqOpts{token: tok, node: nodeA})
	if a.status != 200 || string(a.body) != `{"version":"2023.2.1"}` {
		t.Errorf("version of node-a: %d %s", a.status, a.body)
	}
	a = call(t, s, versionPath, reqOpts{token: tok, node: nodeB})
	if a.status != 200 || string(a.body) != `{"version":"2024.1.0"}` {
		t.Errorf("default version: %d %s", a.status, a.body)
	}
	table := s.Tables(nodeA)[0]
	a = call(t, s, "/api/monitor/get/columns/"+table, reqOpts{token: tok, node: nodeA})
	if a.status != 200 || !strings.HasPrefix(string(a.body), `[{"name":"id","type":"BIGINT"}`) {
		t.Errorf("columns of %s: %d %s", table, a.status, a.body)
	}
	a = call(t, s, "/api/monitor/get/columns/nosuch.table", reqOpts{token: tok, node: nodeA})
	if a.status != 404 || !strings.Contains(string(a.body), `"message"`) {
		t.Errorf("unknown table: %d %s", a.status, a.body)
	}
	a = call(t, s, "/api/monitor/get/nothing", reqOpts{token: tok, node: nodeA})
	if a.status != 404 {
		t.Errorf("unknown endpoint: %d %s", a.status, a.body)
	}
}

func TestGzipOnlyWhenAsked(t *testing.T) {
	s, _ := newTestSim(t, Config{})
	tok := login(t, s)
	for _, gz := range []bool{true, false} {
		a := call(t, s, "/api/monitor/get/lastevents/0", reqOpts{token: tok, node: nodeA, gzip: gz})
		enc := a.header.Get("Content-Encoding")
		if gz && (enc != "gzip" || a.wire[0] != 0x1f || a.wire[1] != 0x8b) {
			t.Errorf("gzip asked: Content-Encoding %q, first bytes % x", enc, a.wire[:2])
		}
		if !gz && (enc != "" || a.wire[0] != '{') {
			t.Errorf("gzip not asked: Content-Encoding %q, body starts %q", enc, a.wire[:1])
		}
		if !strings.HasPrefix(string(a.body), `{"reqs":[`) {
			t.Errorf("gzip=%v: body %.40s", gz, a.body)
		}
	}
}

func TestLastEventsSinceIsInclusive(t *testing.T) {
	for _, exclusive := range []bool{false, true} {
		s, clk := newTestSim(t, Config{Readings: Readings{ExclusiveSince: exclusive}})
		tok := login(t, s)
		at := t0.Add(time.Second)
		s.Append(nodeA, ev("before", at.Add(-time.Millisecond), 0), ev("at-1", at, 0), ev("at-2", at, 0),
			ev("after", at.Add(time.Millisecond), 0))
		s.Append(nodeB, ev("other-node", at, 0))
		clk.Set(at.Add(time.Minute))
		l := listing(t, s, tok, nodeA, "/api/monitor/get/lastevents/"+itoa(ms(at)))
		want := []string{"at-1", "at-2", "after"}
		if exclusive {
			want = []string{"after"}
		}
		if got := comments(l.Reqs); !sameStrings(got, want) {
			t.Errorf("exclusive=%v: reqs %v, want %v", exclusive, got, want)
		}
		if *l.Last != ms(at.Add(time.Minute)) {
			t.Errorf("last = %d, want the clock %d", *l.Last, ms(at.Add(time.Minute)))
		}
		for _, far := range []string{"9223372036854775807", itoa(ms(at.Add(time.Minute)) + 1)} {
			if l := listing(t, s, tok, nodeA, "/api/monitor/get/lastevents/"+far); len(l.Reqs) != 0 {
				t.Errorf("exclusive=%v: lastevents/%s lists %v", exclusive, far, comments(l.Reqs))
			}
		}
	}
}

func TestRunningThenCompleted(t *testing.T) {
	s, clk := newTestSim(t, Config{})
	tok := login(t, s)
	start := t0.Add(time.Second)
	s.Append(nodeA, ev("long", start, 5*time.Second), ev("future", start.Add(time.Hour), 0))
	path := "/api/monitor/get/lastevents/" + itoa(ms(start))

	l := listing(t, s, tok, nodeA, path)
	if len(l.Reqs) != 0 || len(l.Runnings) != 0 {
		t.Fatalf("before its date the event must be invisible: %+v", l)
	}
	clk.Set(start)
	l = listing(t, s, tok, nodeA, path)
	if got := comments(l.Runnings); !sameStrings(got, []string{"long"}) || len(l.Reqs) != 0 {
		t.Fatalf("at its start: runnings %v reqs %v", got, comments(l.Reqs))
	}
	if l.Runnings[0].Duration != nil || l.Runnings[0].Date != ms(start) {
		t.Errorf("running event: %+v (no duration expected)", l.Runnings[0])
	}
	clk.Set(start.Add(5*time.Second - time.Millisecond))
	if l = listing(t, s, tok, nodeA, path); len(l.Runnings) != 1 || len(l.Reqs) != 0 {
		t.Fatalf("1 ms before completion: runnings %v reqs %v", comments(l.Runnings), comments(l.Reqs))
	}
	clk.Set(start.Add(5 * time.Second))
	l = listing(t, s, tok, nodeA, path)
	if len(l.Runnings) != 0 || !sameStrings(comments(l.Reqs), []string{"long"}) {
		t.Fatalf("at completion: runnings %v reqs %v", comments(l.Runnings), comments(l.Reqs))
	}
	if d := l.Reqs[0].Duration; d == nil || *d != 5000 {
		t.Errorf("completed event duration %v, want 5000", d)
	}
}

func TestRunningsAreTheNodesCurrentActivity(t *testing.T) {
	// A load started long before the cursor is still listed in runnings.
	s, clk := newTestSim(t, Config{})
	tok := login(t, s)
	s.Append(nodeA, ev("old-long", t0.Add(time.Second), 2*time.Hour))
	clk.Set(t0.Add(time.Hour))
	l := listing(t, s, tok, nodeA, "/api/monitor/get/lastevents/"+itoa(ms(t0.Add(59*time.Minute))))
	if !sameStrings(comments(l.Runnings), []string{"old-long"}) || len(l.Reqs) != 0 {
		t.Errorf("runnings %v reqs %v", comments(l.Runnings), comments(l.Reqs))
	}
	// Once complete, it is listed by ranges that hold its start date only.
	clk.Set(t0.Add(3 * time.Hour))
	l = listing(t, s, tok, nodeA, "/api/monitor/get/lastevents/"+itoa(ms(t0.Add(59*time.Minute))))
	if len(l.Reqs)+len(l.Runnings) != 0 {
		t.Errorf("completed event listed after the cursor passed its date: %+v", l)
	}
	l = listing(t, s, tok, nodeA, "/api/monitor/get/event/asc/"+itoa(ms(t0))+"/"+itoa(ms(t0.Add(time.Minute)))+"/10")
	if !sameStrings(comments(l.Reqs), []string{"old-long"}) {
		t.Errorf("asc over its start: %v", comments(l.Reqs))
	}
}

func TestAscDescCount(t *testing.T) {
	s, clk := newTestSim(t, Config{})
	tok := login(t, s)
	base := t0.Add(10 * time.Second)
	s.Append(nodeA,
		ev("e0", base.Add(-time.Millisecond), 0),
		ev("e1", base, 10),
		ev("e2", base.Add(time.Second), 10),
		ev("e3", base.Add(time.Second), 10), // same ms as e2, inserted after
		ev("e4", base.Add(2*time.Second), 10),
		ev("running", base.Add(2*time.Second), time.Hour),
		ev("e5", base.Add(2*time.Second+time.Millisecond), 10),
	)
	clk.Set(base.Add(time.Minute))
	lo, hi := itoa(ms(base)), itoa(ms(base.Add(2*time.Second)))
	asc := func(limit string) []string {
		return comments(listing(t, s, tok, nodeA, "/api/monitor/get/event/asc/"+lo+"/"+hi+"/"+limit).Reqs)
	}
	desc := listing(t, s, tok, nodeA, "/api/monitor/get/event/desc/"+lo+"/"+hi+"/100")
	if got := asc("100"); !sameStrings(got, []string{"e1", "e2", "e3", "e4"}) {
		t.Errorf("asc: %v", got)
	}
	if got := asc("2"); !sameStrings(got, []string{"e1", "e2"}) {
		t.Errorf("asc limit 2: %v", got)
	}
	if got := asc("0"); len(got) != 0 {
		t.Errorf("asc limit 0: %v", got)
	}
	if got := comments(desc.Reqs); !sameStrings(got, []string{"e4", "e3", "e2", "e1"}) {
		t.Errorf("desc: %v", got)
	}
	if got := comments(desc.Runnings); !sameStrings(got, []string{"running"}) {
		t.Errorf("desc runnings: %v", got)
	}
	d2 := comments(listing(t, s, tok, nodeA, "/api/monitor/get/event/desc/"+lo+"/"+hi+"/2").Reqs)
	if !sameStrings(d2, []string{"e4", "e3"}) {
		t.Errorf("desc limit 2: %v", d2)
	}
	a := call(t, s, "/api/monitor/get/event/count/"+lo+"/"+hi, reqOpts{token: tok, node: nodeA, gzip: true})
	if a.status != 200 || string(a.body) != "4" {
		t.Errorf("count: %d %s, want 4 (completed only)", a.status, a.body)
	}
	a = call(t, s, "/api/monitor/get/event/count/"+hi+"/"+lo, reqOpts{token: tok, node: nodeA})
	if string(a.body) != "0" {
		t.Errorf("count of an empty range: %s", a.body)
	}
	if st := s.Stats(); st.Requests["event_asc"] != 3 || st.Requests["event_desc"] != 2 ||
		st.Requests["event_count"] != 2 || st.NodeRequests[nodeA] != 7 {
		t.Errorf("stats: %+v", st)
	}
}

func TestCountRunningAndMaxLimit(t *testing.T) {
	s, clk := newTestSim(t, Config{Readings: Readings{CountRunning: true, MaxLimit: 2}})
	tok := login(t, s)
	base := t0.Add(10 * time.Second)
	s.Append(nodeA, ev("a", base, 0), ev("b", base, 0), ev("c", base, 0), ev("run", base, time.Hour))
	clk.Set(base.Add(time.Second))
	r := itoa(ms(base))
	a := call(t, s, "/api/monitor/get/event/count/"+r+"/"+r, reqOpts{token: tok, node: nodeA})
	if string(a.body) != "4" {
		t.Errorf("count with CountRunning: %s, want 4", a.body)
	}
	got := comments(listing(t, s, tok, nodeA, "/api/monitor/get/event/asc/"+r+"/"+r+"/100").Reqs)
	if !sameStrings(got, []string{"a", "b"}) {
		t.Errorf("asc with MaxLimit 2: %v", got)
	}
}

func TestDayListings(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip("no time zone database")
	}
	// 10:00 UTC is 11:00 in Paris; the Paris day began at 23:00 UTC.
	s, clk := newTestSim(t, Config{Location: paris})
	tok := login(t, s)
	parisMidnight := time.Date(2026, 11, 22, 0, 0, 0, 0, paris)
	s.Append(nodeA,
		ev("yesterday-last", parisMidnight.Add(-time.Millisecond), 0),
		ev("today-first", parisMidnight, 0),
		ev("later-today", t0.Add(time.Second), 0),
		ev("tomorrow", parisMidnight.AddDate(0, 0, 1), 0),
	)
	clk.Set(t0.Add(time.Minute))
	today := comments(listing(t, s, tok, nodeA, "/api/monitor/get/events").Reqs)
	if today[0] != "today-first" || today[len(today)-1] != "later-today" {
		t.Errorf("today: %v", today)
	}
	for _, c := range today {
		if c == "yesterday-last" || c == "tomorrow" {
			t.Errorf("today lists %s: %v", c, today)
		}
	}
	byDate := comments(listing(t, s, tok, nodeA, "/api/monitor/get/events/2026-11-22").Reqs)
	if !sameStrings(byDate, today) {
		t.Errorf("events/2026-11-22 %v differs from today %v", byDate, today)
	}
	y := comments(listing(t, s, tok, nodeA, "/api/monitor/get/events/2026-11-21").Reqs)
	if !sameStrings(y, []string{"yesterday-last"}) {
		t.Errorf("yesterday: %v", y)
	}
	if got := listing(t, s, tok, nodeA, "/api/monitor/get/events/2026-11-23").Reqs; len(got) != 0 {
		t.Errorf("tomorrow is not visible yet: %v", comments(got))
	}
	for _, bad := range []string{"2026-13-01", "22-11-2026", "today"} {
		a := call(t, s, "/api/monitor/get/events/"+bad, reqOpts{token: tok, node: nodeA})
		if a.status != 400 || !strings.Contains(string(a.body), `"message"`) {
			t.Errorf("date %s: %d %s", bad, a.status, a.body)
		}
	}
}

func TestListingCapKeepsTheOldest(t *testing.T) {
	s, clk := newTestSim(t, Config{Readings: Readings{ListingCap: 3}})
	tok := login(t, s)
	base := t0.Add(time.Second)
	for _, n := range []string{"c1", "c2", "c3", "c4", "c5"} {
		s.Append(nodeA, ev(n, base, 0))
		base = base.Add(time.Millisecond)
	}
	clk.Set(t0.Add(time.Minute))
	l := listing(t, s, tok, nodeA, "/api/monitor/get/lastevents/"+itoa(ms(t0.Add(time.Second))))
	if !sameStrings(comments(l.Reqs), []string{"c1", "c2", "c3"}) || *l.Last != ms(t0.Add(time.Minute)) {
		t.Errorf("capped listing: %v last %d", comments(l.Reqs), *l.Last)
	}
	if l := listing(t, s, tok, nodeA, "/api/monitor/get/events"); len(l.Reqs) != 3 {
		t.Errorf("capped day listing: %d reqs", len(l.Reqs))
	}
	if l := listing(t, s, tok, nodeA, "/api/monitor/get/event/asc/0/"+itoa(ms(t0.Add(time.Hour)))+"/100"); len(l.Reqs) <= 3 {
		t.Errorf("asc is not capped by ListingCap: %d reqs", len(l.Reqs))
	}
}

func TestShiftClockMovesLast(t *testing.T) {
	s, _ := newTestSim(t, Config{})
	tok := login(t, s)
	s.ShiftClock(nodeA, -90*time.Second)
	l := listing(t, s, tok, nodeA, "/api/monitor/get/lastevents/0")
	if *l.Last != ms(t0)-90000 {
		t.Errorf("node-a last = %d, want %d", *l.Last, ms(t0)-90000)
	}
	if l := listing(t, s, tok, nodeB, "/api/monitor/get/lastevents/0"); *l.Last != ms(t0) {
		t.Errorf("node-b last moved: %d", *l.Last)
	}
}

func TestBadParameters(t *testing.T) {
	s, _ := newTestSim(t, Config{})
	tok := login(t, s)
	for _, p := range []string{
		"lastevents/abc", "lastevents/1.5", "event/asc/x/1/1", "event/asc/1/y/1", "event/asc/1/2/z",
		"event/asc/1/2/-1", "event/desc/1/2/z", "event/count/1/z",
	} {
		a := call(t, s, "/api/monitor/get/"+p, reqOpts{token: tok, node: nodeA})
		if a.status != http.StatusBadRequest || !strings.Contains(string(a.body), `"message"`) {
			t.Errorf("%s: %d %s", p, a.status, a.body)
		}
	}
}

func TestJSONEscapingOfComments(t *testing.T) {
	s, clk := newTestSim(t, Config{Pretty: true})
	tok := login(t, s)
	odd := "quote\" back\\ nl\n tab\t ctl\x01 é \u2028 bad\xff"
	s.Append(nodeA, Event{Type: "NEW_TYPE", Date: ms(t0.Add(time.Second)), Comment: odd})
	clk.Advance(time.Minute)
	l := listing(t, s, tok, nodeA, "/api/monitor/get/lastevents/"+itoa(ms(t0.Add(time.Second))))
	want := strings.ToValidUTF8(odd, "\uFFFD")
	if len(l.Reqs) != 1 || *l.Reqs[0].Comment != want || l.Reqs[0].Type != "NEW_TYPE" {
		t.Errorf("round trip of an odd comment: %+v", l.Reqs)
	}
}
