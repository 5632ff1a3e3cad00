package simulator

import (
	"net/http"
	"testing"
	"time"
)

// dateOf answers a lastevents listing of node and returns its Date header
// (Unix ms) and its `last`.
func dateOf(t *testing.T, s *Simulator, tok, node string) (date, last int64) {
	t.Helper()
	a := call(t, s, "/api/monitor/get/lastevents/0", reqOpts{token: tok, node: node})
	d, err := http.ParseTime(a.header.Get("Date"))
	if a.status != http.StatusOK || err != nil {
		t.Fatalf("listing: %d, Date %q: %v", a.status, a.header.Get("Date"), err)
	}
	return d.UnixMilli(), *listing(t, s, tok, node, "/api/monitor/get/lastevents/0").Last
}

// StepClock steps the console's clock and every node's with it (their
// offsets kept); ShiftClock steps one node's alone; the admin API does both.
func TestStepClock(t *testing.T) {
	s, clk := newTestSim(t, Config{Nodes: []NodeConfig{{Host: "node-a"}, {Host: "node-b", ClockOffset: -20 * time.Second}}})
	s.EnableAdmin()
	tok := login(t, s)
	check := func(when string, console, a, b int64) {
		t.Helper()
		if got := s.ConsoleNow(); got != console {
			t.Errorf("%s: console clock %d, want %d", when, got, console)
		}
		for _, c := range []struct {
			node       string
			date, last int64
		}{{nodeA, console, a}, {nodeB, console, b}} {
			if date, last := dateOf(t, s, tok, c.node); date != c.date || last != c.last {
				t.Errorf("%s: node %s: Date %d, last (its clock) %d; want %d, %d", when, c.node, date, last, c.date, c.last)
			}
		}
	}
	now := ms(t0)
	check("at start", now, now, now-20_000)

	s.StepClock(-90 * time.Second)
	check("after a step of the whole cluster back", now-90_000, now-90_000, now-110_000)
	clk.Advance(time.Second)
	s.Append(nodeB, Event{Type: TableLoaded, Duration: 5, Comment: "after"})
	if tr := s.Truth(nodeB); tr[len(tr)-1].Date != now-109_000 {
		t.Errorf("an event logged now on node b is dated %d, want its clock %d", tr[len(tr)-1].Date, now-109_000)
	}

	if st, body := adminCall(t, s, "POST", "/sim/clock?step=90s"); st != http.StatusOK {
		t.Fatalf("admin step: %d %s", st, body)
	}
	check("after the admin API stepped it forward", now+1000, now+1000, now-19_000)
	if st, body := adminCall(t, s, "POST", "/sim/clock?node="+nodeA+"&step=-30s"); st != http.StatusOK {
		t.Fatalf("admin step of a node: %d %s", st, body)
	}
	check("after node a stepped alone", now+1000, now-29_000, now-19_000)
	for _, bad := range []string{"", "step=soon", "step=1s&node=nowhere:1"} {
		if st, _ := adminCall(t, s, "POST", "/sim/clock?"+bad); st != http.StatusBadRequest {
			t.Errorf("/sim/clock?%s: %d, want 400", bad, st)
		}
	}
}

// StepClock works on the real clock too (a standalone simulator, --demo).
func TestStepClockOfTheRealClock(t *testing.T) {
	s := New(Config{Nodes: []NodeConfig{{Host: "node-a"}}})
	s.StepClock(-90 * time.Second)
	want := time.Now().Add(-90 * time.Second).UnixMilli()
	if got := s.ConsoleNow(); got < want-1000 || got > want+1000 {
		t.Errorf("console clock %d after a step of -90s, want about %d", got, want)
	}
}
