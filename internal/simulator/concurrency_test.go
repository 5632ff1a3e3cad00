package simulator

import (
	"net/http"
	"sync"
	"testing"
	"time"
)

// TestConcurrentUse hammers the simulator from several goroutines (listings,
// incidents, faults, clock moves, stats) so that -race can see the locking.
func TestConcurrentUse(t *testing.T) {
	s, clk := newTestSim(t, Config{Rate: 20, Seed: 2})
	tok := login(t, s)
	var wg sync.WaitGroup
	paths := []string{lastPath, "/api/monitor/get/events", "/api/monitor/get/event/desc/0/99999999999999/50",
		"/api/monitor/get/event/count/0/99999999999999", versionPath}
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			node := []string{nodeA, nodeB}[g%2]
			for i := 0; i < 40; i++ {
				a := call(t, s, paths[(g+i)%len(paths)], reqOpts{token: tok, node: node, gzip: i%2 == 0})
				if a.status != http.StatusOK && a.status != http.StatusBadGateway {
					t.Errorf("status %d: %s", a.status, a.body)
					return
				}
			}
		}(g)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 40; i++ {
			clk.Advance(700 * time.Millisecond)
			s.Append(nodeA, Event{Type: ClusterInit})
			s.MemoryLowEpisode(nodeB)
			s.ReloadIndexes(nodeB)
			s.ShiftClock(nodeA, time.Millisecond)
			s.SetNodeFault(nodeB, Fault{Status: 502, Count: 1})
			_ = s.Stats()
			_ = s.Truth(nodeB)
			if i == 20 {
				s.StopCluster()
				s.StartCluster()
				s.ResetStats()
			}
		}
	}()
	wg.Wait()
}
