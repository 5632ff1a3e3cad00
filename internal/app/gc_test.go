package app

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// gcRig serves a handler wrapped in gcAfterScrapes whose collections are
// counted instead of run, and whose heap counters the test sets.
type gcRig struct {
	g            *gcAfterScrapes
	srv          *httptest.Server
	collected    atomic.Int32
	allocs, live atomic.Uint64
}

func newGCRig(t *testing.T, h http.Handler) *gcRig {
	r := &gcRig{}
	r.g = &gcAfterScrapes{
		collect: func() { r.collected.Add(1) },
		read:    func() (uint64, uint64) { return r.allocs.Load(), r.live.Load() },
	}
	r.srv = httptest.NewServer(r.g.wrap(h))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *gcRig) get(t *testing.T, query string) {
	t.Helper()
	resp, err := http.Get(r.srv.URL + query)
	if err != nil {
		t.Error(err)
		return
	}
	resp.Body.Close()
}

func TestGCAfterScrapesOnlyWhenACollectionIsDue(t *testing.T) {
	r := newGCRig(t, http.NotFoundHandler())
	r.live.Store(10 << 20)

	r.allocs.Store(4 << 20) // less than the live heap allocated: not due
	r.get(t, "")
	// The decision is taken before the answer leaves the handler, so a
	// collection started by this scrape would have moved lastAllocs.
	if r.g.lastAllocs != 0 || r.collected.Load() != 0 {
		t.Fatalf("collected after 4 MiB allocated with 10 MiB live")
	}

	r.allocs.Store(12 << 20) // past the live size: due
	r.get(t, "")
	testkit.WaitFor(t, "a collection once the live size was allocated", func() bool { return r.collected.Load() == 1 })

	r.allocs.Store(20 << 20) // 8 MiB since that collection: not due again
	r.get(t, "")
	r.g.mu.Lock()
	last := r.g.lastAllocs
	r.g.mu.Unlock()
	if last != 12<<20 || r.collected.Load() != 1 {
		t.Fatalf("collected again after 8 MiB with 10 MiB live (lastAllocs %d)", last)
	}

	r.allocs.Store(23 << 20)
	r.get(t, "")
	testkit.WaitFor(t, "a second collection 11 MiB later", func() bool { return r.collected.Load() == 2 })
}

func TestGCAfterScrapesWaitsForTheLastInFlight(t *testing.T) {
	release := map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{})}
	arrived := make(chan string, 2)
	r := newGCRig(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		id := req.URL.Query().Get("id")
		arrived <- id
		<-release[id]
	}))
	r.allocs.Store(100 << 20)
	r.live.Store(1 << 20) // always due: only the scrapes in flight hold it back
	var wg sync.WaitGroup
	for _, id := range []string{"a", "b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.get(t, "?id="+id)
		}()
	}
	<-arrived
	<-arrived
	close(release["a"])
	testkit.WaitFor(t, "scrape a answered", func() bool { return r.g.inflight.Load() == 1 })
	if n := r.collected.Load(); n != 0 {
		t.Fatalf("collected while scrape b was still in flight")
	}
	close(release["b"])
	wg.Wait()
	testkit.WaitFor(t, "one collection once both are answered", func() bool { return r.collected.Load() == 1 })
}

// The real heap counters: what newGCAfterScrapes reads must be the
// runtime's, or the rule never fires (or always does).
func TestGCAfterScrapesReadsTheHeap(t *testing.T) {
	g := newGCAfterScrapes()
	runtime.GC() // live is known once a collection has ended
	g.mu.Lock()
	allocs, live := g.read()
	g.mu.Unlock()
	if allocs == 0 || live == 0 || live > allocs {
		t.Fatalf("heap counters allocs=%d live=%d: not the runtime's", allocs, live)
	}
}
