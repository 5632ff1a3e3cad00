package collector

import (
	"encoding/binary"
	"hash/fnv"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
)

// seenRetention is how far behind the cursor fingerprints are kept. Listings
// repeat events around the cursor (inclusive lastevents, overlapping pages,
// a clock stepping back a little); this window is what dedup can see.
const seenRetention int64 = 2 * 60 * 1000 // ms

// seenCap bounds the fingerprints kept per node, so 200 nodes fit in a few
// MiB however bursty a node is. When it is exceeded the oldest timestamp
// group is forgotten and the floor rises past it.
const seenCap = 512

// seenSet is a bounded multiset of the fingerprints of events already
// counted (or, at first contact, already part of the baseline). Events dated
// before Floor are treated as already counted: they can no longer be told
// apart, and replaying them would be worse than missing them.
type seenSet struct {
	Floor   int64                `json:"floor"`
	Entries map[uint64]seenEntry `json:"entries"`

	// touched lists the fingerprints met in the response being processed,
	// so endResponse can fold their in-response multiplicity into Count.
	touched []uint64

	// byDate orders the fingerprints of Entries by date (a min-heap) once
	// the set has reached its cap, so that forgetting the oldest costs
	// O(log n) instead of a scan of the whole set: a catch-up after an
	// outage runs at the cap on every event, and scanning made it 25 times
	// slower. maxDate is the greatest date in Entries (forgetting removes
	// the oldest first, so it stays exact). Both are derived data, built
	// when the cap is first exceeded and kept in step while indexed; below
	// the cap (the usual poll) nothing is maintained and clones drop them.
	indexed bool
	byDate  datedHeap
	maxDate int64
}

// datedFP is a fingerprint and its event's date.
type datedFP struct {
	date int64
	fp   uint64
}

// datedHeap is a min-heap by date. It is hand-written rather than
// container/heap, whose Push(any) would allocate for every event.
type datedHeap []datedFP

func (h *datedHeap) push(x datedFP) {
	*h = append(*h, x)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if a[p].date <= a[i].date {
			break
		}
		a[p], a[i] = a[i], a[p]
		i = p
	}
}

func (h *datedHeap) pop() datedFP {
	a := *h
	top := a[0]
	n := len(a) - 1
	a[0] = a[n]
	*h = a[:n]
	h.down(0)
	return top
}

func (h datedHeap) down(i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h[r].date < h[l].date {
			m = r
		}
		if h[i].date <= h[m].date {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// index builds byDate and maxDate from Entries; from then on every
// insertion pushes and every removal pops, so they stay in step.
func (s *seenSet) index() {
	if s.indexed {
		return
	}
	s.indexed = true
	s.byDate = s.byDate[:0]
	s.maxDate = 0
	first := true
	for fp, e := range s.Entries {
		s.byDate = append(s.byDate, datedFP{date: e.Date, fp: fp})
		if first || e.Date > s.maxDate {
			s.maxDate = e.Date
		}
		first = false
	}
	for i := len(s.byDate)/2 - 1; i >= 0; i-- {
		s.byDate.down(i)
	}
}

type seenEntry struct {
	Date  int64 `json:"date"`
	Count int32 `json:"count"` // how many events with this fingerprint were counted
	k     int32 // occurrences in the current response
}

// fingerprint identifies an event by everything the API tells about it.
// FNV is stable across restarts, so fingerprints can be saved to a state file.
func fingerprint(e apiclient.Event) uint64 {
	h := fnv.New64a()
	var b [8]byte
	h.Write([]byte(e.Type))
	h.Write([]byte{0})
	binary.LittleEndian.PutUint64(b[:], uint64(e.Date))
	h.Write(b[:])
	if e.HasDuration {
		binary.LittleEndian.PutUint64(b[:], uint64(e.Duration))
		h.Write([]byte{1})
		h.Write(b[:])
	} else {
		h.Write([]byte{0})
	}
	h.Write([]byte(e.Comment))
	return h.Sum64()
}

func (s *seenSet) clone() seenSet {
	c := seenSet{Floor: s.Floor, Entries: make(map[uint64]seenEntry, len(s.Entries))}
	for k, v := range s.Entries {
		v.k = 0
		c.Entries[k] = v
	}
	return c
}

// observe records one occurrence of fp in the current response and reports
// whether it is new: for a fingerprint met k times in this response and
// counted c times before, occurrences beyond c are new (max(0, k-c) in all).
func (s *seenSet) observe(fp uint64, date int64) bool {
	if s.Entries == nil {
		s.Entries = map[uint64]seenEntry{}
	}
	e, ok := s.Entries[fp]
	if !ok {
		e = seenEntry{Date: date}
		if s.indexed {
			if len(s.Entries) == 0 || date > s.maxDate {
				s.maxDate = date
			}
			s.byDate.push(datedFP{date: date, fp: fp})
		}
	}
	if e.k == 0 {
		s.touched = append(s.touched, fp)
	}
	e.k++
	s.Entries[fp] = e
	isNew := e.k > e.Count
	s.enforceCap()
	return isNew
}

// endResponse remembers max(k, c) for every fingerprint of the response.
func (s *seenSet) endResponse() {
	for _, fp := range s.touched {
		e, ok := s.Entries[fp]
		if !ok || e.k == 0 {
			continue
		}
		if e.k > e.Count {
			e.Count = e.k
		}
		e.k = 0
		s.Entries[fp] = e
	}
	s.touched = s.touched[:0]
}

// countAt returns how many events dated exactly date were counted (or taken
// into the baseline).
func (s *seenSet) countAt(date int64) int64 {
	var n int64
	for _, e := range s.Entries {
		if e.Date == date {
			n += int64(e.Count)
		}
	}
	return n
}

// raiseFloor forgets everything dated before floor (the floor never goes down).
func (s *seenSet) raiseFloor(floor int64) {
	if floor <= s.Floor {
		return
	}
	s.Floor = floor
	if s.indexed {
		for len(s.byDate) > 0 && s.byDate[0].date < floor {
			delete(s.Entries, s.byDate.pop().fp)
		}
		return
	}
	for fp, e := range s.Entries {
		if e.Date < floor {
			delete(s.Entries, fp)
		}
	}
}

// enforceCap drops the oldest timestamp group while the set is over its cap,
// unless that group is also the newest one (a burst at one millisecond must
// stay whole, or its remaining events would fall under the floor).
func (s *seenSet) enforceCap() {
	if len(s.Entries) <= seenCap {
		return
	}
	s.index()
	minD, maxD := s.byDate[0].date, s.maxDate
	if minD == maxD && len(s.Entries) <= 8*seenCap {
		return
	}
	s.raiseFloor(minD + 1)
	if len(s.touched) > 4*seenCap {
		kept := s.touched[:0]
		for _, fp := range s.touched {
			if _, ok := s.Entries[fp]; ok {
				kept = append(kept, fp)
			}
		}
		s.touched = kept
	}
}
