package poller

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/event"
	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/tracker"
)

func TestEventRingKeepsTheLatestDatedFirst(t *testing.T) {
	var r eventRing
	if got := r.newestFirst(); len(got) != 0 {
		t.Fatalf("empty ring gives %d events", len(got))
	}
	// Polls of three events each, the second poll holding a late event
	// dated before the first poll's.
	date := int64(1000)
	for i := 0; i < RecentEvents; i++ {
		evs := []tracker.CountedEvent{{Event: event.Event{Type: "A", Date: date}}, {Event: event.Event{Type: "B", Date: date + 1}},
			{Event: event.Event{Type: "C", Date: date + 2}}}
		if i == 1 {
			evs[0].Date = 10 // late
		}
		inDateOrder(evs)
		r.add(evs)
		date += 10
		if c := cap(r.vals); c > RecentEvents {
			t.Fatalf("after %d polls: the ring holds %d places for %d events", i+1, c, RecentEvents)
		}
		got := r.newestFirst()
		if len(got) != min(3*(i+1), RecentEvents) {
			t.Fatalf("after %d polls: %d events, want %d", i+1, len(got), min(3*(i+1), RecentEvents))
		}
		for j := 1; j < len(got); j++ {
			if got[j].Date > got[j-1].Date {
				t.Fatalf("after %d polls: event %d dated %d after event %d dated %d", i+1, j, got[j].Date, j-1, got[j-1].Date)
			}
		}
		if got[0].Date != date-10+2 {
			t.Fatalf("after %d polls: the newest is dated %d, want %d", i+1, got[0].Date, date-10+2)
		}
	}
	// A poll of more events than the ring holds keeps its latest.
	var many []tracker.CountedEvent
	for i := 0; i < RecentEvents+7; i++ {
		many = append(many, tracker.CountedEvent{Event: event.Event{Type: "M", Date: date + int64(i)}})
	}
	r.add(many)
	got := r.newestFirst()
	if len(got) != RecentEvents || got[0].Date != date+RecentEvents+6 || got[len(got)-1].Date != date+7 {
		t.Fatalf("after a large poll: %d events from %d down to %d", len(got), got[0].Date, got[len(got)-1].Date)
	}
}

// recordingSink is an EventWriter that keeps what it is given and fails on
// demand; it checks that the node's committed state does not hold the
// events yet (they are handed out before the commit).
type recordingSink struct {
	e    *env
	mu   sync.Mutex
	fail error
	got  map[string][]tracker.CountedEvent // by node name
}

func (s *recordingSink) WriteEvents(n NodeRef, evs []tracker.CountedEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	counted := uint64(0)
	for _, c := range s.e.state(n.Name).Events {
		counted += c
	}
	if prev := uint64(len(s.got[n.Name])); counted != prev {
		s.e.t.Errorf("%s: the committed state counts %d events when the sink is given the next ones; the sink had %d", n.Name, counted, prev)
	}
	if n.Target != n.Name || n.Cluster != "" {
		s.e.t.Errorf("node %+v: the env names nodes by their host:port, in the unnamed cluster", n)
	}
	if s.fail != nil {
		return s.fail
	}
	for i := 1; i < len(evs); i++ {
		if evs[i].Date < evs[i-1].Date {
			s.e.t.Errorf("%s: events not in date order: %d after %d", n.Name, evs[i].Date, evs[i-1].Date)
		}
	}
	s.got[n.Name] = append(s.got[n.Name], evs...)
	return nil
}

// Every counted event reaches the sink once, before the state that counts
// it is committed; a sink that refuses them leaves the poll unapplied (the
// node down, reason other), and the next poll gives the same events again,
// with the same places.
func TestEventSinkGetsEveryCountedEventOnce(t *testing.T) {
	sink := &recordingSink{got: map[string][]tracker.CountedEvent{}}
	e := newEnv(t, simulator.Config{Rate: 0.5}, 2, Options{Events: sink})
	sink.e = e
	e.poll() // first contact: nothing counted
	node := e.nodes[0]
	for i := 0; i < 12; i++ {
		if i == 5 {
			// Identical events at one millisecond, and a running one.
			now := e.clock.Now().UnixMilli()
			ev := simulator.Event{Type: simulator.SaveMetadata, Date: now, Duration: 3, Comment: "2"}
			e.sim.Append(node, ev, ev, ev, simulator.Event{Type: simulator.TableLoaded, Date: now, Duration: 40_000, Comment: "sales"})
		}
		if i == 7 {
			sink.mu.Lock()
			sink.fail = errors.New("disk full")
			sink.mu.Unlock()
		}
		e.clock.Advance(15 * time.Second)
		res := e.poll()
		if i == 7 {
			for name, r := range res {
				if r.Err == nil || r.Reason != ReasonOther || !strings.Contains(r.Err.Error(), "disk full") {
					t.Fatalf("%s: a poll whose events the sink refused: %+v", name, r)
				}
			}
			sink.mu.Lock()
			sink.fail = nil
			sink.mu.Unlock()
		}
	}
	e.checkTruth()
	for _, n := range e.nodes {
		// The truth, as the sink must have it: every event completed after
		// first contact, each at its place among identical ones.
		var want []string
		places := map[string]int{}
		for _, ev := range e.sim.Truth(n) {
			if ev.CompletedAt > e.baseline[n] && ev.CompletedAt <= e.high[n] {
				k := fmt.Sprintf("%s %d %d %q", ev.Type, ev.Date, ev.Duration, ev.Comment)
				places[k]++
				want = append(want, fmt.Sprintf("%s #%d", k, places[k]))
			}
		}
		var got []string
		for _, c := range sink.got[n] {
			if !c.HasDuration {
				t.Errorf("%s: %s at %d handed out without its duration", n, c.Type, c.Date)
			}
			got = append(got, fmt.Sprintf("%s %d %d %q #%d", c.Type, c.Date, c.Duration, c.Comment, c.Nth))
		}
		sort.Strings(want)
		sort.Strings(got)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: the sink got\n%s\nthe truth is\n%s", n, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if n == node && !strings.Contains(strings.Join(got, "\n"), `SAVE_METADATA`) {
			t.Errorf("%s: the scripted events are not among those the sink got", n)
		}
	}
	// The status holds the latest of them, the latest dated first.
	for _, ns := range e.p.Status()[0].Nodes {
		all := sink.got[ns.Name]
		if want := min(len(all), RecentEvents); len(ns.Events) != want || want == 0 {
			t.Fatalf("%s: status holds %d events, want %d", ns.Name, len(ns.Events), want)
		}
		latest := all[0].Date
		for _, c := range all {
			latest = max(latest, c.Date)
		}
		if ns.Events[0].Date != latest {
			t.Errorf("%s: status shows %d first, the latest is %d", ns.Name, ns.Events[0].Date, latest)
		}
	}
}
