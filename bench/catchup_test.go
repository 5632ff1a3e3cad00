package bench

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
	"github.com/indexima-exporter/indexima_exporter/collector"
	"github.com/indexima-exporter/indexima_exporter/poller"
)

// catchUp is one exporter that has made first contact with the backlog's
// node and is ready to read the backlog.
type catchUp struct {
	reg *prometheus.Registry
}

// newCatchUp builds a fresh exporter (fresh cursor) on the replay console
// and makes first contact, which takes the baseline and counts nothing.
func newCatchUp(tb testing.TB, url string) *catchUp {
	tb.Helper()
	// A day of a busy node is bigger than the default body limit (64 MiB,
	// about 800k events): the limit is a policy against hostile bodies, not
	// what is measured here, so it is raised like an operator would.
	client, err := apiclient.New(apiclient.Config{URL: url, Timeout: 5 * time.Minute, MaxBodyBytes: 1 << 30})
	if err != nil {
		tb.Fatal(err)
	}
	polls := poller.New(poller.Options{Logger: benchLogger(tb)})
	exp, err := collector.New(polls, collector.Options{Logger: benchLogger(tb)})
	if err != nil {
		tb.Fatal(err)
	}
	polls.SetClusters([]poller.Cluster{{Client: client, Nodes: []poller.Node{
		{Target: apiclient.Node{Host: backlogNode.Host, Port: backlogNode.Port}}}}})
	reg := prometheus.NewRegistry()
	reg.MustRegister(exp)
	c := &catchUp{reg: reg}
	if up, counted := c.scrape(tb); up != 1 || counted != 0 {
		tb.Fatalf("first contact: up %v, counted %v; want 1 and 0", up, counted)
	}
	return c
}

// scrape gathers once and returns indexima_up and the sum of
// indexima_events_total.
func (c *catchUp) scrape(tb testing.TB) (up, counted float64) {
	tb.Helper()
	fams, err := c.reg.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	for _, f := range fams {
		switch f.GetName() {
		case "indexima_up":
			up = value(f.Metric[0])
		case "indexima_events_total":
			for _, m := range f.Metric {
				counted += value(m)
			}
		}
	}
	return up, counted
}

func value(m *dto.Metric) float64 {
	if m.Counter != nil {
		return m.Counter.GetValue()
	}
	return m.Gauge.GetValue()
}

// heapWatch samples the live heap (as of the latest GC) while the catch-up
// runs, to find its peak.
type heapWatch struct {
	stop chan struct{}
	done sync.WaitGroup
	peak uint64
}

const liveHeapMetric = "/gc/heap/live:bytes"

func liveHeap() uint64 {
	s := []metrics.Sample{{Name: liveHeapMetric}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func watchHeap() *heapWatch {
	w := &heapWatch{stop: make(chan struct{}), peak: liveHeap()}
	w.done.Add(1)
	go func() {
		defer w.done.Done()
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
				w.peak = max(w.peak, liveHeap())
			}
		}
	}()
	return w
}

func (w *heapWatch) finish() uint64 {
	close(w.stop)
	w.done.Wait()
	return max(w.peak, liveHeap())
}

// catchUpCost is what reading one backlog cost.
type catchUpCost struct {
	bytesPerEvent  float64 // allocated
	allocsPerEvent float64
	liveGrowth     int64 // peak live heap during the catch-up minus the live heap before
}

// measureCatchUp reads the backlog once with a fresh exporter, checks that
// every event was counted, and returns its allocations and heap growth.
func measureCatchUp(tb testing.TB, url string, bl *backlog) catchUpCost {
	c := newCatchUp(tb, url)
	runtime.GC()
	base := liveHeap()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	w := watchHeap()
	up, counted := c.scrape(tb)
	peak := w.finish()
	runtime.ReadMemStats(&after)
	if up != 1 || counted != float64(bl.events) {
		tb.Fatalf("catch-up: up %v, counted %v events; want 1 and %d", up, counted, bl.events)
	}
	n := float64(bl.events)
	return catchUpCost{
		bytesPerEvent:  float64(after.TotalAlloc-before.TotalAlloc) / n,
		allocsPerEvent: float64(after.Mallocs-before.Mallocs) / n,
		liveGrowth:     int64(peak) - int64(base),
	}
}

// benchLogger shows the collector's warnings in the test log, so a failed
// catch-up says why.
func benchLogger(tb testing.TB) log.Logger {
	return level.NewFilter(log.LoggerFunc(func(kv ...any) error {
		tb.Log(kv...)
		return nil
	}), level.AllowWarn())
}
