package simulator

import (
	"fmt"
	"testing"
	"time"
)

// Each profile makes its choice over HTTP, and the in-process answers are
// the HTTP ones.
func TestProfiles(t *testing.T) {
	type want struct {
		runningListed bool // a running event is in runnings
		lastIsConsole bool // last is the console's clock
		newestFirst   bool
	}
	for _, tc := range []struct {
		profile string
		want    want
	}{
		{"running", want{runningListed: true}},
		{"completed-only", want{}},
		{"console-clock", want{runningListed: true, lastIsConsole: true}},
		{"console-clock-completed-only", want{lastIsConsole: true}},
		{"newest-first", want{runningListed: true, newestFirst: true}},
	} {
		t.Run(tc.profile, func(t *testing.T) {
			cfg := Config{Nodes: []NodeConfig{{Host: "node-a", ClockOffset: -20 * time.Second}}, Readings: Readings{ListingCap: 3}}
			if err := cfg.ApplyProfile(tc.profile); err != nil {
				t.Fatal(err)
			}
			s, clk := newTestSim(t, cfg)
			token := login(t, s)
			since := ms(t0) - 20_000 // the node's now at t0
			var evs []Event
			for i := 0; i < 5; i++ {
				evs = append(evs, Event{Type: SaveMetadata, Date: since + int64(i)*100, Duration: 50, Comment: fmt.Sprint(i)})
			}
			evs = append(evs, Event{Type: TableLoaded, Date: since + 600, Duration: 60_000, Comment: "running"})
			s.Append(nodeA, evs...)
			clk.Advance(time.Second)
			path := "/api/monitor/get/lastevents/" + itoa(since)
			l := listing(t, s, token, nodeA, path)
			if got := len(l.Runnings) == 1; got != tc.want.runningListed {
				t.Errorf("running event listed: %v, want %v (%v)", got, tc.want.runningListed, comments(l.Runnings))
			}
			wantLast := ms(clk.Now()) - 20_000
			if tc.want.lastIsConsole {
				wantLast = ms(clk.Now())
			}
			if *l.Last != wantLast {
				t.Errorf("last %d, want %d (console %d, node 20 s behind)", *l.Last, wantLast, ms(clk.Now()))
			}
			// The cap of 3 keeps the oldest, or the newest newest-first.
			wantReqs := []string{"0", "1", "2"}
			if tc.want.newestFirst {
				wantReqs = []string{"4", "3", "2"}
			}
			if got := comments(l.Reqs); !sameStrings(got, wantReqs) {
				t.Errorf("reqs %v, want %v", got, wantReqs)
			}
			// In-process, the same answer.
			d := s.LastEvents(nodeA, since)
			var got []string
			for _, e := range d.Reqs {
				got = append(got, e.Comment)
			}
			if !sameStrings(got, wantReqs) || d.Last != *l.Last || len(d.Runnings) != len(l.Runnings) {
				t.Errorf("in-process listing %v last %d runnings %d, HTTP %v last %d runnings %d",
					got, d.Last, len(d.Runnings), wantReqs, *l.Last, len(l.Runnings))
			}
			if c := s.EventCount(nodeA, since, since+10_000); c != 5 {
				t.Errorf("in-process count %d, want 5 completed events", c)
			}
		})
	}
	if err := (&Config{}).ApplyProfile("nonsense"); err == nil {
		t.Error("an unknown profile was accepted")
	}
}

// StartedAgo puts the initial history that long before the start, e.g. on
// the previous day.
func TestStartedAgo(t *testing.T) {
	s, _ := newTestSim(t, Config{StartedAgo: 30 * time.Hour})
	truth := s.Truth(nodeA)
	if truth[0].Type != ClusterStart || truth[0].Date != ms(t0.Add(-30*time.Hour)) {
		t.Fatalf("first event %+v, want CLUSTER_START 30 h before %v", truth[0], t0)
	}
	for _, e := range truth {
		if e.CompletedAt > ms(t0.Add(-30*time.Hour+20*time.Minute)) {
			t.Errorf("initial history beyond its 20 minutes: %+v", e)
		}
	}
}

// SetRate(0) stops background events from the next simulated second on.
func TestSetRate(t *testing.T) {
	s, clk := newTestSim(t, Config{Rate: 50})
	clk.Advance(10 * time.Second)
	before := len(s.Truth(nodeA))
	s.SetRate(0)
	clk.Advance(2 * time.Second) // the current second was generated whole
	mid := len(s.Truth(nodeA))
	clk.Advance(time.Minute)
	if after := len(s.Truth(nodeA)); after != mid || before < 100 {
		t.Errorf("events: %d at rate 50, %d then %d after SetRate(0)", before, mid, after)
	}
}
