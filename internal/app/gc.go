package app

import (
	"net/http"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// gcAfterScrapes moves a garbage collection that is about due to the moment
// the last /metrics scrape in flight has been answered.
//
// Why: a scrape of hundreds of nodes builds its whole exposition at once
// (tens of thousands of series, several MiB that are garbage as soon as the
// answer is written), and Go sets the next heap goal at twice what is live
// when a collection ends. A collection that ends in the middle of a scrape
// sets it at twice the exposition plus the node state; one right after the
// scrape, at twice the node state alone.
//
// It collects only when the heap has allocated at least its live size since
// the previous forced collection, which is when Go's pacer (GOGC=100) would
// collect anyway: it moves collections to the cheap moment rather than
// adding any. /probe is not wrapped: a probe's exposition is one node's.
type gcAfterScrapes struct {
	collect  func()                       // runtime.GC; replaced in tests
	read     func() (allocs, live uint64) // heap counters; replaced in tests
	inflight atomic.Int32

	mu         sync.Mutex
	lastAllocs uint64 // allocs when the previous collection was started
}

func newGCAfterScrapes() *gcAfterScrapes {
	samples := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/heap/live:bytes"}}
	return &gcAfterScrapes{
		collect: runtime.GC,
		read: func() (uint64, uint64) {
			metrics.Read(samples) // under g.mu
			return samples[0].Value.Uint64(), samples[1].Value.Uint64()
		},
	}
}

func (g *gcAfterScrapes) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.inflight.Add(1)
		defer func() {
			if g.inflight.Add(-1) == 0 {
				g.maybeCollect()
			}
		}()
		h.ServeHTTP(w, r)
	})
}

func (g *gcAfterScrapes) maybeCollect() {
	g.mu.Lock()
	defer g.mu.Unlock()
	allocs, live := g.read()
	if allocs-g.lastAllocs < live {
		return // a collection would not be due yet
	}
	g.lastAllocs = allocs
	go g.collect() // the answer is already written; nobody waits for this
}
