package bench

import (
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkCatchUp is ingestion after an outage: a node logged a day of
// events while the exporter could not reach it; the next scrape reads them
// all from one lastevents listing through the real path (HTTP on loopback,
// apiclient's streaming decoder, the collector's tracker: dedup, counters,
// gauges, histograms) and checks event/count. Each iteration uses a fresh
// exporter whose first contact is not timed. GOMAXPROCS is 1 during the
// benchmark: the figure is for one core, the replay server included.
//
// Metrics: events/s; B/event and allocs/event (allocated per event);
// live-heap-growth-MiB, the peak of the live heap during the catch-up over
// the live heap before it: flat from 10k to 1M events when memory does not
// grow with the backlog.
//
// The gzip case is the same listing compressed as the console sends it:
// decompression is then part of the cost.
func BenchmarkCatchUp(b *testing.B) {
	cases := []struct {
		n    int
		gzip bool
	}{{10_000, false}, {1_000_000, false}, {1_000_000, true}}
	for _, tc := range cases {
		n := tc.n
		name := fmt.Sprintf("events=%d", n)
		if tc.gzip {
			name += "/gzip"
		}
		b.Run(name, func(b *testing.B) {
			bl := recordBacklog(b, n)
			bl.useGzip = tc.gzip
			url := bl.replay(b)
			prev := runtime.GOMAXPROCS(1)
			defer runtime.GOMAXPROCS(prev)
			b.SetBytes(bl.bytes) // decoded bytes, gzip or not
			b.ReportAllocs()
			var growth int64
			var bytesPerEvent, allocsPerEvent float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				c := newCatchUp(b, url)
				runtime.GC()
				base := liveHeap()
				w := watchHeap()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				b.StartTimer()
				up, counted := c.scrape(b)
				b.StopTimer()
				runtime.ReadMemStats(&after)
				growth = max(growth, int64(w.finish())-int64(base))
				if up != 1 || counted != float64(n) {
					b.Fatalf("catch-up: up %v, counted %v; want 1 and %d", up, counted, n)
				}
				bytesPerEvent += float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
				allocsPerEvent += float64(after.Mallocs-before.Mallocs) / float64(n)
				b.StartTimer()
			}
			b.StopTimer()
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(bytesPerEvent/float64(b.N), "B/event")
			b.ReportMetric(allocsPerEvent/float64(b.N), "allocs/event")
			b.ReportMetric(float64(growth)/(1<<20), "live-heap-growth-MiB")
		})
	}
}
