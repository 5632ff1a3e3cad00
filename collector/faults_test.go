package collector

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// A node failing for a few scrapes (bad status, bad JSON midway, cut gzip):
// up is 0 for it only, nothing of a failed poll is applied, its cursor does
// not move, and once it recovers nothing is lost or counted twice.
func TestNodeFaultThenRecovery(t *testing.T) {
	faults := map[string]simulator.Fault{
		"status 502":     {Status: 502},
		"malformed json": {Body: simulator.BodyMalformedJSON},
		"truncated gzip": {Body: simulator.BodyTruncatedGzip},
		"wrong shape":    {Body: simulator.BodyWrongShape},
		"html page":      {Body: simulator.BodyHTML},
		"message body":   {Body: simulator.BodyMessage},
	}
	for name, f := range faults {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, simulator.Config{Seed: 11, Rate: 4}, 3, Options{})
			r := rand.New(rand.NewPCG(7, 8))
			bad := e.nodes[1]
			var m metrics
			for i := 0; i < 3; i++ {
				m = e.scrape(nil)
				e.advance(r, time.Second, 10*time.Second)
			}
			m = e.scrape(nil)
			cursor := m.value(t, "indexima_events_cursor_timestamp_seconds", l("node", bad))
			frozen := sortedPairsOf(m, bad)
			e.sim.SetNodeFault(bad, f)
			for i := 0; i < 3; i++ {
				e.advance(r, time.Second, 10*time.Second)
				m = e.scrape(nil)
				for _, n := range e.nodes {
					want := 1.0
					if n == bad {
						want = 0
					}
					if got := m.value(t, "indexima_up", l("node", n)); got != want {
						t.Fatalf("scrape %d: up{%s} = %v, want %v", i, n, got, want)
					}
				}
				if got := m.value(t, "indexima_events_cursor_timestamp_seconds", l("node", bad)); got != cursor {
					t.Fatalf("cursor moved while failing: %v -> %v", cursor, got)
				}
				if got := sortedPairsOf(m, bad); got != frozen {
					t.Fatalf("counters of the failing node changed:\n%s\n%s", frozen, got)
				}
				if got := m.value(t, "indexima_console_up", nil); got != 1 {
					t.Fatalf("console_up = %v while only a node fails", got)
				}
			}
			e.sim.ClearFaults()
			for i := 0; i < 2; i++ {
				e.advance(r, time.Second, 10*time.Second)
				m = e.scrape(nil)
			}
			if got := m.value(t, "indexima_up", l("node", bad)); got != 1 {
				t.Fatalf("node did not recover: up %v", got)
			}
			e.checkTruth(m, nil)
		})
	}
}

func sortedPairsOf(m metrics, node string) string {
	got := map[string]float64{}
	for _, s := range m.series("indexima_events_total", l("node", node)) {
		got[s.labels["event"]] = s.value
	}
	return fmtPairs(sortedPairs(got))
}

func fmtPairs(p []string) string {
	out := ""
	for _, s := range p {
		out += s + " "
	}
	return out
}

// A dead node (a hanging one, one the console does not know) gives up 0
// while the other nodes are polled and counted right; an unreachable console
// gives console_up 0.
func TestDeadNodesDoNotSpoilTheOthers(t *testing.T) {
	e := newEnv(t, simulator.Config{Seed: 5, Rate: 2}, 3, Options{})
	e.timeout = time.Second
	hanging := e.nodes[2]
	c := e.cluster("", e.nodes...)
	c.Nodes = append(c.Nodes, Node{Name: "ghost", Target: apiClientNode("ghost.test", 9999)})
	e.exp.SetClusters([]Cluster{c})
	e.scrape(nil)
	e.sim.SetNodeFault(hanging, simulator.Fault{Hang: true})
	var m metrics
	for i := 0; i < 3; i++ {
		e.clock.Advance(5 * time.Second)
		m = e.scrape(nil)
	}
	for _, n := range []string{hanging, "ghost"} {
		if got := m.value(t, "indexima_up", l("node", n)); got != 0 {
			t.Errorf("up{%s} = %v, want 0", n, got)
		}
	}
	for _, n := range e.nodes[:2] {
		if got := m.value(t, "indexima_up", l("node", n)); got != 1 {
			t.Errorf("up{%s} = %v, want 1", n, got)
		}
	}
	if len(m.series("indexima_events_total", l("node", "ghost"))) != 0 {
		t.Errorf("a never contacted node has event series")
	}
	e.nodes = e.nodes[:2] // the truth of the healthy ones
	e.checkTruth(m, nil)

	e.sim.ClearFaults()
	e.sim.SetConsoleFault(simulator.Fault{Down: true})
	m = e.scrape(nil)
	if got := m.value(t, "indexima_console_up", nil); got != 0 {
		t.Errorf("console_up = %v with the console down", got)
	}
	if got := m.value(t, "indexima_up", l("node", e.nodes[0])); got != 0 {
		t.Errorf("up = %v with the console down", got)
	}
}

// Eight scrapes at once (Prometheus servers in HA) share each node's poll:
// one lastevents per node per poll, nothing counted twice.
func TestConcurrentScrapesShareThePoll(t *testing.T) {
	e := newEnv(t, simulator.Config{Seed: 9, Rate: 3}, 3, Options{})
	r := rand.New(rand.NewPCG(9, 10))
	e.scrape(nil)
	for round := 0; round < 4; round++ {
		e.advance(r, time.Second, 20*time.Second)
		e.scrape(nil) // record the clock as seen by the concurrent scrapes
		for _, n := range e.nodes {
			// Slow answers keep each poll in flight while the others arrive.
			e.sim.SetNodeFault(n, simulator.Fault{Latency: 300 * time.Millisecond})
		}
		e.sim.ResetStats()
		start := make(chan struct{})
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if _, err := e.reg.Gather(); err != nil {
					errs <- err
				}
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		st := e.sim.Stats()
		// Each poll makes one lastevents and one event/count call per node.
		if st.Requests["lastevents"] != st.Requests["event_count"] {
			t.Errorf("lastevents %d != event/count %d", st.Requests["lastevents"], st.Requests["event_count"])
		}
		if st.Requests["lastevents"] > 2*len(e.nodes) {
			t.Errorf("%d lastevents for 8 simultaneous scrapes of %d nodes: polls were not shared", st.Requests["lastevents"], len(e.nodes))
		}
		e.sim.ClearFaults()
	}
	e.checkTruth(e.scrape(nil), nil)
}
