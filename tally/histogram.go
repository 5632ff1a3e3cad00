package tally

import "slices"

// DurationBuckets are the upper bounds (seconds) of the duration
// histograms: from a quick metadata save to a long cluster start, about
// five times apart. A histogram is kept per node and event type and every
// bound is read at each scrape, so the bounds are few: eight, where the 15
// of the first version made most of a scrape's cost (docs/performance.md).
// Every bound is one of legacyDurationBuckets, so histograms saved with
// those are re-binned exactly.
var DurationBuckets = [...]float64{.01, .1, .5, 2.5, 10, 60, 300, 1800}

// legacyDurationBuckets are the bounds of state files written before the
// bounds were saved with each histogram.
var legacyDurationBuckets = []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800}

// Histogram is a histogram of event durations kept as plain data, so a
// node's state can be cloned, saved and read at scrape time.
type Histogram struct {
	Bounds  []float64 `json:"bounds,omitempty"` // DurationBuckets when saved
	Buckets []uint64  `json:"buckets"`          // non-cumulative, one per bound
	Count   uint64    `json:"count"`
	Sum     float64   `json:"sum"`
}

// Observe counts one duration in seconds.
func (h *Histogram) Observe(seconds float64) {
	if h.Buckets == nil {
		h.Buckets = make([]uint64, len(DurationBuckets))
		h.Bounds = DurationBuckets[:]
	}
	h.observeIn(DurationBuckets[:], seconds)
}

// observeIn counts seconds into the bucket of the first bound at or above
// it (none: +Inf, the count alone).
func (h *Histogram) observeIn(bounds []float64, seconds float64) {
	for i, b := range bounds {
		if seconds <= b {
			h.Buckets[i]++
			break
		}
	}
	h.Count++
	h.Sum += seconds
}

// rebin moves the counts of a histogram read from a state file onto
// DurationBuckets: each saved bucket goes to the first bound at or above
// its own (exact when the saved bounds include the current ones), a bucket
// above every bound only to the count (+Inf). Saved buckets whose bounds
// cannot be told are dropped from the buckets, never from the count.
func (h *Histogram) rebin() {
	bounds := h.Bounds
	if bounds == nil && len(h.Buckets) == len(legacyDurationBuckets) {
		bounds = legacyDurationBuckets
	}
	if slices.Equal(bounds, DurationBuckets[:]) && len(h.Buckets) == len(DurationBuckets) {
		h.Bounds = DurationBuckets[:]
		return
	}
	out := make([]uint64, len(DurationBuckets))
	var inBuckets uint64
	if len(bounds) == len(h.Buckets) && increasing(bounds) {
		j := 0
		for i, n := range h.Buckets {
			for j < len(DurationBuckets) && DurationBuckets[j] < bounds[i] {
				j++
			}
			if j < len(DurationBuckets) && inBuckets+n <= h.Count {
				out[j] += n
				inBuckets += n
			}
		}
	}
	h.Bounds, h.Buckets = DurationBuckets[:], out
}

func increasing(b []float64) bool {
	for i := 1; i < len(b); i++ {
		if !(b[i] > b[i-1]) {
			return false
		}
	}
	return true
}

func (h Histogram) clone() *Histogram {
	c := h
	c.Buckets = append([]uint64(nil), h.Buckets...)
	return &c
}
