package tally

import (
	"slices"
	"testing"
)

// observed returns a histogram of the durations under the given bounds,
// as the collector of that version would have kept it.
func observed(bounds []float64, durations []float64) *Histogram {
	h := &Histogram{Buckets: make([]uint64, len(bounds))}
	for _, s := range durations {
		h.observeIn(bounds, s)
	}
	return h
}

func TestRebinOfASavedHistogramIsExact(t *testing.T) {
	durations := []float64{0.001, 0.01, 0.03, 0.05, 0.07, 0.1, 0.2, 0.25, 0.4, 0.5, 0.9, 1, 2, 2.5,
		4, 5, 9, 10, 20, 30, 45, 60, 100, 120, 200, 300, 500, 600, 1000, 1800, 2000, 99999}
	want := observed(DurationBuckets[:], durations)

	// A state file written before the bounds were saved: 15 buckets.
	legacy := observed(legacyDurationBuckets, durations)
	legacy.rebin()
	if !slices.Equal(legacy.Bounds, DurationBuckets[:]) || len(legacy.Buckets) != len(DurationBuckets) {
		t.Fatalf("rebinned to bounds %v, %d buckets", legacy.Bounds, len(legacy.Buckets))
	}
	for i := range want.Buckets {
		if legacy.Buckets[i] != want.Buckets[i] {
			t.Fatalf("legacy histogram rebinned to %v, observing the same durations gives %v", legacy.Buckets, want.Buckets)
		}
	}
	if legacy.Count != want.Count || legacy.Sum != want.Sum {
		t.Fatalf("count/sum changed by the rebin: %d/%v, want %d/%v", legacy.Count, legacy.Sum, want.Count, want.Sum)
	}

	// Saved with the current bounds: unchanged.
	same := observed(DurationBuckets[:], durations)
	same.Bounds = append([]float64(nil), DurationBuckets[:]...)
	same.rebin()
	for i := range want.Buckets {
		if same.Buckets[i] != want.Buckets[i] {
			t.Fatalf("a histogram with the current bounds changed: %v, want %v", same.Buckets, want.Buckets)
		}
	}
}

func TestRebinOfADamagedHistogramKeepsTheCount(t *testing.T) {
	for name, h := range map[string]*Histogram{
		"bounds not increasing":    {Bounds: []float64{5, 1}, Buckets: []uint64{3, 4}, Count: 9, Sum: 20},
		"bounds and buckets apart": {Bounds: []float64{1, 5, 10}, Buckets: []uint64{3, 4}, Count: 9, Sum: 20},
		"no bounds, odd length":    {Buckets: []uint64{1, 2, 3}, Count: 9, Sum: 20},
		"buckets above the count":  {Bounds: []float64{1, 5}, Buckets: []uint64{8, 8}, Count: 9, Sum: 20},
	} {
		h.rebin()
		var inBuckets uint64
		for _, n := range h.Buckets {
			inBuckets += n
		}
		if len(h.Buckets) != len(DurationBuckets) || inBuckets > h.Count || h.Count != 9 || h.Sum != 20 {
			t.Errorf("%s: rebinned to %v (count %d, sum %v): want %d buckets holding at most the count 9, sum 20",
				name, h.Buckets, h.Count, h.Sum, len(DurationBuckets))
		}
	}
}
