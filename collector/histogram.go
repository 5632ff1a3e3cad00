package collector

// durationBuckets are the upper bounds (seconds) of
// indexima_event_duration_seconds: from a quick metadata save to a long
// cluster start.
var durationBuckets = []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800}

// durationHist is a cumulative histogram kept as plain data, so node state
// can be cloned, saved and emitted with MustNewConstHistogram.
type durationHist struct {
	Buckets []uint64 `json:"buckets"` // non-cumulative, one per durationBuckets bound
	Count   uint64   `json:"count"`
	Sum     float64  `json:"sum"`
}

func (h *durationHist) observe(seconds float64) {
	if h.Buckets == nil {
		h.Buckets = make([]uint64, len(durationBuckets))
	}
	for i, b := range durationBuckets {
		if seconds <= b {
			h.Buckets[i]++
			break
		}
	}
	h.Count++
	h.Sum += seconds
}

// cumulative returns the bucket map MustNewConstHistogram wants.
func (h *durationHist) cumulative() map[float64]uint64 {
	m := make(map[float64]uint64, len(durationBuckets))
	var acc uint64
	for i, b := range durationBuckets {
		if i < len(h.Buckets) {
			acc += h.Buckets[i]
		}
		m[b] = acc
	}
	return m
}

func (h durationHist) clone() *durationHist {
	c := h
	c.Buckets = append([]uint64(nil), h.Buckets...)
	return &c
}
