package faults

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// inflight counts, per node, the console calls in progress and the most
// ever seen at once.
type inflight struct {
	mu   sync.Mutex
	now  map[string]int
	peak map[string]int
}

func (f *inflight) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Monitor-Target-Host")
		if key != "" {
			f.mu.Lock()
			f.now[key]++
			f.peak[key] = max(f.peak[key], f.now[key])
			f.mu.Unlock()
			defer func() {
				f.mu.Lock()
				f.now[key]--
				f.mu.Unlock()
			}()
		}
		next.ServeHTTP(w, r)
	})
}

// Two Prometheus servers and a curl loop scrape at once, round after round,
// while every node answers slowly so that scrapes overlap: each node is
// polled by one poll at a time (its calls never overlap), and nothing is
// counted twice.
func TestConcurrentScrapes(t *testing.T) {
	f := &inflight{now: map[string]int{}, peak: map[string]int{}}
	r := newRig(t, rigOpts{sim: simulator.Config{Seed: 12, Rate: 3}, front: f.wrap})
	r.scrape()
	const rounds, scrapers = 12, 6 // 2 Prometheus + 4 curl
	for round := 0; round < rounds; round++ {
		r.advance(30 * time.Second)
		for _, n := range r.nodes {
			r.sim.SetNodeFault(n, simulator.Fault{Latency: 30 * time.Millisecond})
		}
		results := make(chan scrape, scrapers)
		var wg sync.WaitGroup
		for i := 0; i < scrapers; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				// Stagger a little so some scrapes join a poll in flight
				// and others start the next one.
				time.Sleep(time.Duration(i) * 15 * time.Millisecond)
				code, body, err := r.exp.get("/metrics", "", "")
				if err != nil || code != 200 {
					t.Errorf("concurrent scrape: %d %v", code, err)
					return
				}
				results <- parseMetrics(t, body)
			}(i)
		}
		wg.Wait()
		close(results)
		for s := range results {
			r.observe(s)
		}
	}
	r.sim.ClearFaults()
	tl := r.check(r.settle())
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range r.nodes {
		host, _ := splitKey(t, n)
		if f.peak[host] != 1 {
			t.Errorf("node %s: %d console calls at once; want 1 (one poll per node at a time)", n, f.peak[host])
		}
	}
	t.Logf("%d rounds of %d concurrent scrapes: %s; calls per node %v, peak at once %v", rounds, scrapers, tl, r.sim.Stats().NodeRequests, f.peak)
}
