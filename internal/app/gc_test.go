package app

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// gcRig serves a handler wrapped in gcAfterScrapes whose collections are
// counted instead of run, and whose heap the handler sets: each scrape
// allocates perScrape bytes.
type gcRig struct {
	g         *gcAfterScrapes
	srv       *httptest.Server
	collected atomic.Int32
	ended     chan func() // each collection's ended, for the tests that end them

	mu        sync.Mutex
	heap      heapNow
	perScrape uint64
}

func newGCRig(t *testing.T, h http.Handler) *gcRig {
	r := &gcRig{ended: make(chan func(), 16)}
	r.g = &gcAfterScrapes{
		collect: func(ended func()) {
			r.collected.Add(1)
			r.ended <- ended
		},
		read: func() heapNow {
			r.mu.Lock()
			defer r.mu.Unlock()
			return r.heap
		},
	}
	r.srv = httptest.NewServer(r.g.wrap(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.heap.allocs += r.perScrape
		r.heap.objects += r.perScrape
		r.mu.Unlock()
		h.ServeHTTP(w, req)
	})))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *gcRig) set(objects, goal, perScrape uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.heap.objects, r.heap.goal, r.perScrape = objects, goal, perScrape
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

func (r *gcRig) settled() uint64 {
	r.g.mu.Lock()
	defer r.g.mu.Unlock()
	return r.g.settled
}

// endCollection ends n collections, the last finding live, then tells the
// oldest collection moved after a scrape and not yet ended that it has.
func (r *gcRig) endCollection(n, live uint64) {
	ended := <-r.ended
	r.mu.Lock()
	r.heap.live, r.heap.cycles = live, r.heap.cycles+n
	r.mu.Unlock()
	ended()
}

// waitCollections waits for the count of collections: end decides before
// the answer leaves the handler, but collects in a goroutine of its own.
func (r *gcRig) waitCollections(t *testing.T, want int32) {
	t.Helper()
	testkit.WaitFor(t, "the collections", func() bool { return r.collected.Load() == want })
}

func TestGCAfterScrapesOnlyWhenTheNextScrapeWouldCollect(t *testing.T) {
	const mib = 1 << 20
	r := newGCRig(t, http.NotFoundHandler())

	r.set(10*mib, 30*mib, 8*mib) // 18 after this scrape, +8 next: under 30
	r.get(t, "")
	r.set(20*mib, 30*mib, 8*mib) // 28 after, +8 next: the next would collect
	r.get(t, "")
	r.waitCollections(t, 1)

	// A small exporter far under the goal: never (its pacer collects on its
	// own every so many scrapes, and this must not add to that).
	r.set(1*mib, 4*mib, 100<<10)
	for range 20 {
		r.get(t, "") // ends at 3 MiB
	}
	r.get(t, "")
	if n := r.collected.Load(); n != 1 {
		t.Fatalf("%d collections; the small heap never reached its goal", n)
	}
	r.set(3*mib+900<<10, 4*mib, 100<<10) // 4 MiB after this one, at the goal
	r.get(t, "")
	r.waitCollections(t, 2)
}

// A collection in the middle of a scrape of many nodes polled at once
// marks live what the polls under way hold, and the runtime's next goal is
// twice that: between scrapes the heap is held to twice (GOGC) what the
// latest collection moved here found live, read when it has ended.
func TestGCAfterScrapesHoldsTheHeapToWhatIsLiveBetweenScrapes(t *testing.T) {
	const mib = 1 << 20
	r := newGCRig(t, http.NotFoundHandler())
	settled, end := r.settled, r.endCollection
	r.mu.Lock()
	r.heap.gogc, r.heap.cycles = 100, 7
	r.mu.Unlock()
	r.set(45*mib, 60*mib, 10*mib) // 55 after, +10 next: over 60
	r.get(t, "")
	r.waitCollections(t, 1)
	end(1, 30*mib)
	if got := settled(); got != 60*mib {
		t.Fatalf("settled goal %d MiB after the collection moved here found 30 MiB live; want 60", got/mib)
	}

	r.set(45*mib, 120*mib, 10*mib) // the runtime's goal inflated; 55 +10 is over 60
	r.get(t, "")
	r.waitCollections(t, 2)
	r.set(35*mib, 120*mib, 10*mib) // 45 +10: under 60
	r.get(t, "")
	if n := r.collected.Load(); n != 2 {
		t.Fatalf("%d collections; the heap stayed under twice what was live", n)
	}

	// Two collections ended by the time the one moved here is seen to end:
	// the latest is the pacer's, in the middle of a scrape; what it found
	// live is not the heap between scrapes, and the settled goal stays.
	end(2, 50*mib)
	if got := settled(); got != 60*mib {
		t.Fatalf("settled goal %d MiB taken from a collection in the middle of a scrape; want 60 kept", got/mib)
	}

	// GOGC=off (the runtime reports -1): nothing is moved.
	r.mu.Lock()
	r.heap.gogc = -1
	r.mu.Unlock()
	r.set(100*mib, 50*mib, 10*mib)
	r.get(t, "")
	r.get(t, "")
	if n := r.collected.Load(); n != 2 {
		t.Fatalf("%d collections with GOGC off", n)
	}
}

// Unless GOGC is the operator's, the collection moved after a scrape sets
// GOGC so that the next scrape's allocations fit, one and a half times,
// between what it found live and the goal (so the pacer does not collect
// in the scrape's middle as well), within 100 and 200.
func TestGCAfterScrapesSetsGOGCForWhatAScrapeAllocates(t *testing.T) {
	const mib = 1 << 20
	r := newGCRig(t, http.NotFoundHandler())
	var set []int64
	r.g.setGOGC = func(p int64) {
		set = append(set, p) // under r.g.mu
		r.mu.Lock()
		r.heap.gogc = p
		r.mu.Unlock()
	}
	r.mu.Lock()
	r.heap.gogc = 100
	r.mu.Unlock()
	settled := r.settled
	// scrape makes a scrape that allocates allocs and is followed by the
	// collection moved here, which finds live.
	scrape := func(allocs, live uint64) {
		t.Helper()
		r.set(100*mib, 50*mib, allocs) // over the goal: the collection is moved here
		r.get(t, "")
		r.endCollection(1, live)
	}
	for _, c := range []struct {
		allocs, live uint64
		want         []int64
		settled      uint64
	}{
		{allocs: 5 * mib, live: 5 * mib, want: []int64{150}, settled: 12*mib + mib/2}, // 5 + 1.5 x 5
		{allocs: 3 * mib, live: 30 * mib, want: []int64{150, 100}, settled: 60 * mib}, // 4.5 fits in 30: back to 100
		{allocs: 50 * mib, live: 10 * mib, want: []int64{150, 100, 200}, settled: 30 * mib},
		{allocs: 40 * mib, live: 20 * mib, want: []int64{150, 100, 200}, settled: 60 * mib}, // 300 wanted, 200 already
	} {
		scrape(c.allocs, c.live)
		if !slices.Equal(set, c.want) || settled() != c.settled {
			t.Fatalf("scrape of %d MiB, %d MiB live: GOGC set %v, settled goal %.1f MiB; want %v and %.1f",
				c.allocs/mib, c.live/mib, set, float64(settled())/mib, c.want, float64(c.settled)/mib)
		}
	}

	// GOGC in the environment: the operator's, never changed.
	r.g.setGOGC = nil
	scrape(50*mib, 10*mib)
	if len(set) != 3 || settled() != 30*mib {
		t.Fatalf("GOGC set %v with the operator's in force; settled goal %.1f MiB, want 30 (twice 200 %%)", set, float64(settled())/mib)
	}
}

func TestTunedGOGC(t *testing.T) {
	for _, c := range []struct {
		live, allocs uint64
		want         int64
	}{
		{live: 0, allocs: 1 << 20, want: 100},
		{live: 100, allocs: 10, want: 100},
		{live: 100, allocs: 67, want: 101}, // 100.5 rounded up
		{live: 100, allocs: 100, want: 150},
		{live: 100, allocs: 134, want: 200}, // 201 wanted
		{live: 5_100_000, allocs: 4_900_000, want: 145},
	} {
		if got := tunedGOGC(c.live, c.allocs); got != c.want {
			t.Errorf("tunedGOGC(live %d, scrape allocs %d) = %d, want %d", c.live, c.allocs, got, c.want)
		}
	}
}

// startCollection starts a collection of the real runtime, returns before
// it has ended with GOGC as it found it, and tells when it has ended.
func TestStartCollectionStartsOneWithoutWaiting(t *testing.T) {
	// GOGC 1000: the pacer's own trigger is far above the garbage below
	// (the heap's minimum goal alone is 40 MiB then).
	gogc := debug.SetGCPercent(1000)
	defer debug.SetGCPercent(gogc)
	runtime.GC()
	sample := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	cycles := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	before := cycles()
	// Garbage over the 1 % startCollection sets: 2 MiB in small objects.
	var keep [][]byte
	for range 1024 {
		keep = append(keep, make([]byte, 2<<10))
	}
	if cycles() != before {
		t.Fatalf("a collection before startCollection (GOGC 1000)")
	}
	ended := make(chan uint64, 1)
	startCollection(func() { ended <- cycles() })
	if got := debug.SetGCPercent(1000); got != 1000 {
		t.Fatalf("GOGC %d after startCollection; want it set back to 1000", got)
	}
	select {
	case n := <-ended:
		if n != before+1 {
			t.Fatalf("told of the end after %d collections; want the one started (%d)", n-before, 1)
		}
	case <-time.After(testkit.WaitTimeout):
		t.Fatalf("no end of the collection told within %s (%d collections ended)", testkit.WaitTimeout, cycles()-before)
	}
}

func TestGCAfterScrapesWaitsForTheLastInFlight(t *testing.T) {
	release := map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{})}
	arrived := make(chan string, 2)
	r := newGCRig(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		id := req.URL.Query().Get("id")
		arrived <- id
		<-release[id]
	}))
	r.set(100<<20, 10<<20, 1<<20) // always due: only the scrapes in flight hold it back
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
	testkit.WaitFor(t, "scrape a answered", func() bool {
		r.g.mu.Lock()
		defer r.g.mu.Unlock()
		return r.g.inflight == 1
	})
	if n := r.collected.Load(); n != 0 {
		t.Fatalf("collected while scrape b was still in flight")
	}
	close(release["b"])
	wg.Wait()
	r.waitCollections(t, 1)
}

// The real heap counters: what newGCAfterScrapes reads must be the
// runtime's, or the rule never fires (or always does).
func TestGCAfterScrapesReadsTheHeap(t *testing.T) {
	g := newGCAfterScrapes()
	runtime.GC()
	g.mu.Lock()
	h := g.read()
	g.mu.Unlock()
	gogc := debug.SetGCPercent(100)
	debug.SetGCPercent(gogc)
	if h.allocs == 0 || h.objects == 0 || h.goal < h.objects/2 || h.objects > h.allocs ||
		h.live == 0 || h.live > h.goal || h.gogc != int64(gogc) || h.cycles == 0 {
		t.Fatalf("heap counters %+v (GOGC %d): not the runtime's", h, gogc)
	}
}

// The exporter sets GOGC unless it is the operator's (TestMain keeps it
// for the other tests of this package).
func TestNewGCAfterScrapesSetsGOGCUnlessTheOperatorDoes(t *testing.T) {
	defer func(keep bool) { keepGOGC = keep }(keepGOGC)
	keepGOGC = false
	if newGCAfterScrapes().setGOGC == nil {
		t.Error("GOGC not set by the exporter with none in the environment")
	}
	keepGOGC = true
	if newGCAfterScrapes().setGOGC != nil {
		t.Error("GOGC set by the exporter with the operator's in the environment")
	}
}
