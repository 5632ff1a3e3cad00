package app

import (
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// gcAfterScrapes moves the garbage collection that the next /metrics scrape
// would trigger to the moment the last scrape in flight has been answered.
//
// Why: a scrape of hundreds of nodes builds its whole exposition at once
// (tens of thousands of series, several MiB that are garbage as soon as the
// answer is written), and Go sets the next heap goal at twice what is live
// when a collection ends. A collection that ends in the middle of a scrape
// sets it at twice the exposition plus the node state; one right after the
// scrape, at twice the node state alone. At 200 nodes over a simulated day
// this took the resident memory from 41-44 MiB to 36-38 MiB (median).
//
// It collects only when the heap plus what the scrape just allocated
// reaches the heap goal, that is when the next scrape (which allocates
// about as much) would make the pacer collect in its middle: the
// collection is moved, not added. (Collecting whenever the live size had
// been allocated cost small exporters 15-30 % more CPU.) /probe is not
// wrapped: a probe's exposition is one node's.
//
// The goal it holds the heap to between scrapes is also at most twice
// (GOGC) what its latest collection found live: a collection in the middle
// of a scrape that polls thousands of nodes at once marks what the polls
// under way hold, and the runtime's next goal doubles that (at 2000 nodes
// polled at once, the heap peaked at 122 MiB instead of 78).
//
// And the goal leaves a scrape room to end before the pacer collects: a
// scrape of many nodes allocates about as much as the heap holds live
// between scrapes (at 200 nodes 4.9 MiB for 5.1 live, at 2000 42 for about
// 35), so with GOGC at 100 the pacer collected in the middle of nearly
// every scrape, besides the collection moved here: two per scrape, a fifth
// of the exporter's CPU (loadharness -compare: 0.78 / 0.83 / 0.83 at 200 /
// 1000 / 2000 nodes with the rule below, 1.0 to 1.1 collections a scrape).
// Unless GOGC is set in the environment, it is raised from 100 to what
// makes the goal what is live plus one and a half scrapes' allocations
// (the pacer may start a collection as early as 70 % of the way to its
// goal), at most 200: the heap then peaks at what is live plus a scrape,
// collected once, right after it.
type gcAfterScrapes struct {
	// collect starts a collection and calls ended once it has ended
	// (startCollection); replaced in tests.
	collect func(ended func())
	read    func() heapNow // runtime/metrics; replaced in tests
	// setGOGC sets GOGC (setGCPercent); nil when GOGC is the operator's,
	// set in the environment, which is never changed.
	setGOGC func(percent int64)

	mu          sync.Mutex
	inflight    int
	startAllocs uint64 // allocs when the first scrape in flight began
	// scrapeAllocs is what the latest scrapes allocated, from the first
	// one's start to the last one's end.
	scrapeAllocs uint64
	// settled is the goal set by the latest collection moved here: twice
	// (GOGC) the heap it found live between scrapes (0: none yet).
	settled uint64
}

// GOGC's bounds when gcAfterScrapes sets it: the runtime's default, and
// the most it raises it to (a goal of three times what is live).
const (
	defaultGOGC = 100
	maxGOGC     = 200
)

// tunedGOGC is the GOGC whose goal leaves room, above live, for one and a
// half times what a scrape allocates, within [defaultGOGC, maxGOGC].
func tunedGOGC(live, scrapeAllocs uint64) int64 {
	if live == 0 {
		return defaultGOGC
	}
	want := (scrapeAllocs*150 + live - 1) / live // rounded up
	return int64(min(max(want, defaultGOGC), maxGOGC))
}

// heapNow is what gcAfterScrapes reads of the heap.
type heapNow struct {
	allocs  uint64 // bytes allocated since the start (cumulative)
	objects uint64 // bytes of heap objects, live or not yet collected
	goal    uint64 // the heap size at which the pacer ends a collection
	live    uint64 // the heap the latest collection marked live
	gogc    int64  // GOGC, percent (negative: off)
	cycles  uint64 // collections completed since the start
}

func newGCAfterScrapes() *gcAfterScrapes {
	samples := []metrics.Sample{
		{Name: "/gc/heap/allocs:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/goal:bytes"},
		{Name: "/gc/heap/live:bytes"}, {Name: "/gc/gogc:percent"}, {Name: "/gc/cycles/total:gc-cycles"},
	}
	g := &gcAfterScrapes{
		collect: startCollection,
		read: func() heapNow {
			metrics.Read(samples) // under g.mu
			return heapNow{samples[0].Value.Uint64(), samples[1].Value.Uint64(), samples[2].Value.Uint64(),
				// The runtime reports GOGC=off (-1) as that int32 made uint64.
				samples[3].Value.Uint64(), int64(int32(samples[4].Value.Uint64())), samples[5].Value.Uint64()}
		},
	}
	if !keepGOGC {
		g.setGOGC = setGCPercent
	}
	return g
}

// keepGOGC is set when GOGC is the operator's, set in the environment: it
// is never changed then.
var keepGOGC = os.Getenv("GOGC") != ""

func (g *gcAfterScrapes) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.begin()
		defer g.end()
		h.ServeHTTP(w, r)
	})
}

func (g *gcAfterScrapes) begin() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.inflight == 0 {
		g.startAllocs = g.read().allocs
	}
	g.inflight++
}

func (g *gcAfterScrapes) end() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.inflight--; g.inflight > 0 {
		return
	}
	h := g.read()
	g.scrapeAllocs = h.allocs - g.startAllocs
	if h.gogc < 0 {
		return // GOGC=off: the collections are the memory limit's
	}
	goal := h.goal
	if g.settled > 0 {
		// A collection in the middle of a scrape marks live what the polls
		// under way hold, and everything they allocate while it marks: at
		// 2000 nodes polled at once, 58 MiB for 34 between scrapes, and
		// the pacer's next goal is twice that. Between scrapes the heap is
		// held to the goal of what is live between scrapes.
		goal = min(goal, g.settled)
	}
	if h.objects+(h.allocs-g.startAllocs) < goal {
		return // the next scrape fits under the goal: no collection to move
	}
	// In a goroutine of its own: the answer is written, but not ended until
	// the handler returns, and a collection begins by stopping the world.
	go g.collect(func() { g.settle(h.cycles) })
}

// settle takes the goal between scrapes from the collection moved here,
// which started when before collections had ended: what it found live is
// the heap between scrapes, unless another one ended since (the pacer's,
// in the middle of a scrape, which marked the polls under way).
func (g *gcAfterScrapes) settle(before uint64) {
	g.mu.Lock() // read's samples are shared: read under g.mu
	defer g.mu.Unlock()
	h := g.read()
	if h.cycles != before+1 {
		return
	}
	gogc := h.gogc
	if g.setGOGC != nil && gogc >= 0 {
		if gogc = tunedGOGC(h.live, g.scrapeAllocs); gogc != h.gogc {
			g.setGOGC(gogc)
		}
	}
	g.settled = 0
	if gogc > 0 {
		g.settled = h.live + h.live*uint64(gogc)/100
	}
}

// startCollection starts a garbage collection, returns without waiting for
// it and calls ended once it has ended. It sets GOGC to 1 % for the time
// of one large allocation (every allocation of over 32 KiB checks whether
// the heap has reached the pacer's trigger, and at 1 % it has), then sets
// it back. runtime.GC would wait for the collection and then sweep the
// heap a span at a time with a runtime.Gosched after each, every one
// waking an idle processor: 10 % of the exporter's CPU in a profile at 200
// nodes (loadharness -compare without it: 0.94 / 0.98 / 0.99 at 200 / 1000
// / 2000 nodes, and less memory at 1000 and 2000). The end is seen by a cleanup
// of an object that only the collection started here can free (it is
// unreachable before the collection starts). Should no collection start
// (one is already running), the pacer collects as before, and ended comes
// after the next one.
func startCollection(ended func()) {
	// Before GOGC goes down: at 1 %, the watched object's own allocation
	// could start the collection while watch still holds it, and that
	// collection would keep it.
	watch(ended)
	gogcMu.Lock()
	defer gogcMu.Unlock()
	gogc := debug.SetGCPercent(1)
	if gogc < 0 {
		debug.SetGCPercent(gogc) // GOGC=off (end does not get here then)
		return
	}
	trigger = make([]byte, triggerSize)
	trigger = nil
	debug.SetGCPercent(gogc)
}

// gogcMu orders the changes of GOGC: startCollection sets back what it
// found, which must not be a value of setGCPercent's that it overwrote.
var gogcMu sync.Mutex

func setGCPercent(percent int64) {
	gogcMu.Lock()
	defer gogcMu.Unlock()
	debug.SetGCPercent(int(percent))
}

// watch allocates an object nothing references and calls ended once a
// collection has freed it. Not inlined: no frame of startCollection's may
// hold the object when the collection scans its stack.
//
//go:noinline
func watch(ended func()) {
	// Pointers in it: the runtime packs small objects without pointers
	// together, and their cleanups may never run.
	watched := &struct{ _ *byte }{}
	runtime.AddCleanup(watched, func(ended func()) { ended() }, ended)
}

// triggerSize is an allocation large enough to check the heap's trigger
// (the runtime's maxSmallSize is 32 KiB); trigger keeps it on the heap.
const triggerSize = 64 << 10

var trigger []byte
