package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// sampleState is a node's state after 20 minutes at 0.05 events/s (the
// load harness's busy node), as the engine wrote it.
func sampleState(tb testing.TB) *tracker.State {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "node-state.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var st tracker.State
	if err := json.Unmarshal(b, &st); err != nil {
		tb.Fatal(err)
	}
	return &st
}

// BenchmarkSaveProbes is the store under /probe: every save a new state of
// one of 200 nodes, 16 at once.
func BenchmarkSaveProbes(b *testing.B) {
	s, _, err := Open(filepath.Join(b.TempDir(), "state.json"))
	if err != nil {
		b.Fatal(err)
	}
	base := sampleState(b)
	keys := make([]string, 200)
	for i := range keys {
		keys[i] = fmt.Sprintf("/node-%03d:9999", i)
	}
	states := make([]*tracker.State, 64)
	for i := range states {
		states[i] = base.Clone()
		states[i].Cursor += int64(i)
	}
	for i, k := range keys { // every node has its region: the steady state
		if err := s.Save(k, func() *tracker.State { return states[i%len(states)] }); err != nil {
			b.Fatal(err)
		}
	}
	syncs0, writes0 := s.Stats().Syncs, s.Stats().Writes
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := 0; i < b.N; i++ {
		st := states[(i+1)%len(states)] // not the state the node has: a write
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := s.Save(keys[i%len(keys)], func() *tracker.State { return st }); err != nil {
				b.Error(err)
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
	st := s.Stats()
	b.ReportMetric(float64(st.Writes-writes0)/float64(st.Syncs-syncs0), "writes/sync")
}

func BenchmarkEncode(b *testing.B) {
	st := sampleState(b)
	var buf bytes.Buffer
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf.Reset()
		if err := encodePayload(&buf, "/node-001:9999", st); err != nil {
			b.Fatal(err)
		}
	}
}
