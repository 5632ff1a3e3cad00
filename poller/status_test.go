package poller

import (
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

func TestPollRingKeepsTheLatestNewestFirst(t *testing.T) {
	var r pollRing
	if got := r.newestFirst(); len(got) != 0 {
		t.Fatalf("empty ring gives %d records", len(got))
	}
	for i := 1; i <= RecentPolls+3; i++ {
		r.add(PollRecord{Calls: i})
		got := r.newestFirst()
		if len(got) != min(i, RecentPolls) {
			t.Fatalf("after %d polls: %d records, want %d", i, len(got), min(i, RecentPolls))
		}
		for j, rec := range got {
			if rec.Calls != i-j {
				t.Fatalf("after %d polls: record %d is poll %d, want %d", i, j, rec.Calls, i-j)
			}
		}
	}
}

// Status reports what the polls recorded and what the engine learned, the
// numbers of the committed state (those /metrics shows); a failed poll carries its typed error and
// reason, applies no count, and the node is down.
func TestStatusFollowsThePolls(t *testing.T) {
	e := newEnv(t, simulator.Config{}, 2, Options{})
	if s := e.p.Status(); len(s) != 1 || len(s[0].Nodes) != 2 || len(s[0].Nodes[0].Polls) != 0 || s[0].Nodes[0].Contacted {
		t.Fatalf("before any poll: %+v", s)
	}
	e.poll() // first contact
	st := e.p.Status()[0].Nodes[0]
	last, ok := st.Last()
	if !ok || !last.Up() || !last.FirstContact || last.Calls == 0 || last.EventsCounted != 0 || !st.Contacted || st.Since.IsZero() {
		t.Fatalf("after first contact: %+v", st)
	}

	node := e.nodes[0]
	for i := 0; i < 3; i++ {
		e.sim.Append(node, simulator.Event{Type: simulator.SaveMetadata, Duration: 5, Comment: "1"})
	}
	e.clock.Advance(time.Minute)
	e.poll()
	st = e.p.Status()[0].Nodes[0]
	last, _ = st.Last()
	if !last.Up() || last.FirstContact || last.EventsCounted != 3 || len(st.Polls) != 2 {
		t.Fatalf("second poll: %+v (polls %d)", last, len(st.Polls))
	}
	committed := e.state(node)
	var counted uint64
	for _, c := range committed.Events {
		counted += c
	}
	if st.CountedTotal != counted || st.Reported != committed.Reported {
		t.Errorf("status counted %d reported %d; committed state counted %d reported %d", st.CountedTotal, st.Reported,
			counted, committed.Reported)
	}
	if st.Cursor.UnixMilli() != committed.Cursor {
		t.Errorf("status cursor %v, committed state %v", st.Cursor, committed.Cursor)
	}
	if st.Semantics == "" || st.ClusterState == "" {
		t.Errorf("semantics %q, cluster state %q", st.Semantics, st.ClusterState)
	}

	// A node the console cannot reach: down, with the reason and the error.
	e.sim.SetNodeFault(node, simulator.Fault{Status: 502})
	e.sim.Append(node, simulator.Event{Type: simulator.SaveMetadata, Duration: 5, Comment: "1"})
	e.clock.Advance(time.Minute)
	e.poll()
	st = e.p.Status()[0].Nodes[0]
	last, _ = st.Last()
	if last.Up() || last.Reason == "" || !strings.Contains(last.Error, "502") || last.EventsCounted != 0 || st.Failures[last.Reason] != 1 {
		t.Fatalf("failed poll: %+v, failures %v", last, st.Failures)
	}
	if other := e.p.Status()[0].Nodes[1]; len(other.Polls) != 3 || !other.Polls[0].Up() {
		t.Errorf("the other node: %+v", other.Polls)
	}
}

// Status may be read while polls run (the status page and scrapes at once).
func TestStatusWhilePolling(t *testing.T) {
	e := newEnv(t, simulator.Config{Rate: 1}, 3, Options{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 200; i++ {
			for _, c := range e.p.Status() {
				for _, n := range c.Nodes {
					_, _ = n.Last()
					_ = n.RunningTotal()
				}
			}
		}
	}()
	for i := 0; i < 5; i++ {
		e.clock.Advance(10 * time.Second)
		e.poll()
	}
	<-done
	for _, n := range e.p.Status()[0].Nodes {
		if len(n.Polls) != 5 {
			t.Errorf("%s: %d polls recorded, want 5", n.Name, len(n.Polls))
		}
	}
}
