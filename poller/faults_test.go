package poller

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// A node failing for a few polls (bad status, bad JSON midway, cut gzip):
// its poll fails, the others succeed, nothing of a failed poll is applied,
// its cursor does not move, and once it recovers nothing is lost or
// counted twice.
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
			for i := 0; i < 3; i++ {
				e.poll()
				e.advance(r, time.Second, 10*time.Second)
			}
			e.poll()
			cursor := e.state(bad).Cursor
			frozen := e.counted(bad)
			e.sim.SetNodeFault(bad, f)
			for i := 0; i < 3; i++ {
				e.advance(r, time.Second, 10*time.Second)
				res := e.poll()
				for _, n := range e.nodes {
					if failed := res[n].Err != nil; failed != (n == bad) {
						t.Fatalf("poll %d of %s: err %v", i, n, res[n].Err)
					}
				}
				if got := e.state(bad).Cursor; got != cursor {
					t.Fatalf("cursor moved while failing: %v -> %v", cursor, got)
				}
				if got := e.counted(bad); got != frozen {
					t.Fatalf("counters of the failing node changed:\n%s\n%s", frozen, got)
				}
				if res[bad].Reason == "" {
					t.Fatalf("a failed poll without a reason: %+v", res[bad])
				}
				if !res[e.nodes[0]].ConsoleAnswered {
					t.Fatalf("the console did not answer while only a node fails")
				}
			}
			e.sim.ClearFaults()
			var res map[string]Result
			for i := 0; i < 2; i++ {
				e.advance(r, time.Second, 10*time.Second)
				res = e.poll()
			}
			if res[bad].Err != nil {
				t.Fatalf("node did not recover: %v", res[bad].Err)
			}
			e.checkTruth()
		})
	}
}

// A dead node (a hanging one, one the console does not know) fails its
// polls while the other nodes are polled and counted right; an unreachable
// console is told apart (the console did not answer).
func TestDeadNodesDoNotSpoilTheOthers(t *testing.T) {
	e := newEnv(t, simulator.Config{Seed: 5, Rate: 2}, 3, Options{})
	e.timeout = time.Second
	hanging := e.nodes[2]
	c := e.cluster("", e.nodes...)
	c.Nodes = append(c.Nodes, Node{Name: "ghost", Target: apiclient.Node{Host: "ghost.test", Port: 9999}})
	e.p.SetClusters([]Cluster{c})
	e.poll()
	e.sim.SetNodeFault(hanging, simulator.Fault{Hang: true})
	var res map[string]Result
	for i := 0; i < 3; i++ {
		e.clock.Advance(5 * time.Second)
		res = e.poll()
	}
	for _, n := range []string{hanging, "ghost"} {
		if res[n].Err == nil {
			t.Errorf("poll of %s succeeded", n)
		}
	}
	for _, n := range e.nodes[:2] {
		if res[n].Err != nil {
			t.Errorf("poll of %s: %v", n, res[n].Err)
		}
	}
	if e.state("ghost").Contacted {
		t.Errorf("a node the console does not know was contacted")
	}
	e.nodes = e.nodes[:2] // the truth of the healthy ones
	e.checkTruth()

	e.sim.ClearFaults()
	e.sim.SetConsoleFault(simulator.Fault{Down: true})
	res = e.poll()
	for n, r := range res {
		if r.Err == nil || r.ConsoleAnswered {
			t.Errorf("console down, node %s: err %v, console answered %v", n, r.Err, r.ConsoleAnswered)
		}
	}
}

// Eight scrapes at once (Prometheus servers in HA) share each node's poll:
// one lastevents per node per poll, nothing counted twice.
func TestConcurrentScrapesShareThePoll(t *testing.T) {
	e := newEnv(t, simulator.Config{Seed: 9, Rate: 3}, 3, Options{})
	r := rand.New(rand.NewPCG(9, 10))
	e.poll()
	for round := 0; round < 4; round++ {
		e.advance(r, time.Second, 20*time.Second)
		e.poll() // record the clock as seen by the concurrent polls
		for _, n := range e.nodes {
			// Slow answers keep each poll in flight while the others arrive.
			e.sim.SetNodeFault(n, simulator.Fault{Latency: 300 * time.Millisecond})
		}
		e.sim.ResetStats()
		start := make(chan struct{})
		var wg sync.WaitGroup
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for n, res := range e.pollNodes() {
					if res.Err != nil {
						t.Errorf("node %s: %v", n, res.Err)
					}
				}
			}()
		}
		close(start)
		wg.Wait()
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
	e.poll()
	e.checkTruth()
}
