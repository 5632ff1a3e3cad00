package simulator

import (
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"time"
)

// nowMS is the node's clock in Unix ms: the console clock plus the node's
// ShiftClock offset. Caller holds n.mu.
// rate is the background rate, Config.Rate until SetRate changes it.
func (s *Simulator) rate() float64 { return math.Float64frombits(s.rateBits.Load()) }

func (s *Simulator) setRate(r float64) { s.rateBits.Store(math.Float64bits(r)) }

func (s *Simulator) nowMS(n *node) int64 {
	return s.clock.Now().UnixMilli() + n.offsetMS
}

// lockNode locks n, brings its background log up to the node's now and
// returns that now. Every reader and writer goes through here, so generation
// is lazy and independent of when the clock is read.
func (s *Simulator) lockNode(n *node) int64 {
	n.mu.Lock()
	now := s.nowMS(n)
	s.generate(n, now)
	return now
}

// slotRNG is the generator of one simulated second of one node: a pure
// function of (Seed, node, slot), which makes the log reproducible.
func (s *Simulator) slotRNG(n *node, slot int64, salt uint64) *rand.Rand {
	a := uint64(s.cfg.Seed)*0x9E3779B97F4A7C15 ^ uint64(n.index+1)*0xBF58476D1CE4E5B9 ^ salt
	return rand.New(rand.NewPCG(a, uint64(slot)*0x94D049BB133111EB+uint64(n.index)))
}

// generate logs the background events of every slot that has begun by now.
// A slot is generated whole as soon as it begins; its events whose date is
// still ahead stay invisible until then. Caller holds n.mu.
func (s *Simulator) generate(n *node, now int64) {
	if s.rate() <= 0 {
		n.genSlot = max(n.genSlot, now/1000+1) // nothing to make up if the rate comes back
		return
	}
	for n.genSlot*1000 <= now {
		s.generateSlot(n, n.genSlot)
		n.genSlot++
	}
}

func poisson(r *rand.Rand, lambda float64) int {
	if lambda <= 0 {
		return 0
	}
	if lambda > 30 {
		k := math.Round(lambda + math.Sqrt(lambda)*r.NormFloat64())
		if k < 0 {
			return 0
		}
		return int(k)
	}
	l, k, p := math.Exp(-lambda), 0, 1.0
	for {
		p *= r.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

func (s *Simulator) generateSlot(n *node, slot int64) {
	if n.stopped {
		return
	}
	r := s.slotRNG(n, slot, 1)
	count := poisson(r, s.rate())
	if count == 0 {
		return
	}
	offs := make([]int64, count)
	for i := range offs {
		offs[i] = int64(r.IntN(1000))
	}
	sort.Slice(offs, func(a, b int) bool { return offs[a] < offs[b] })
	for _, off := range offs {
		s.backgroundEvent(n, r, slot*1000+off)
	}
}

// longish returns a duration in ms: mostly short, sometimes seconds to
// minutes so that events are seen running.
func longish(r *rand.Rand, shortMin, shortMax int64) int64 {
	x := r.Float64()
	switch {
	case x < 0.85:
		return shortMin + r.Int64N(shortMax-shortMin+1)
	case x < 0.97:
		return 3000 + r.Int64N(57000)
	default:
		return 60000 + r.Int64N(240000)
	}
}

// backgroundEvent logs one event of the background mix at date, keeping the
// loaded-index state consistent. Caller holds n.mu.
func (s *Simulator) backgroundEvent(n *node, r *rand.Rand, date int64) {
	x := r.Float64()
	switch {
	case x < 0.36:
		t := n.tables[r.IntN(len(n.tables))]
		n.insertAt(TableLoaded, date, longish(r, 40, 3000), t)
	case x < 0.72:
		// Prefer an index that is not loaded; otherwise a refresh.
		idx := n.indexes[r.IntN(len(n.indexes))]
		for _, cand := range n.indexes {
			if !n.loaded[cand] {
				idx = cand
				break
			}
		}
		n.loaded[idx] = true
		n.insertAt(HyperIndexLoaded, date, longish(r, 60, 4000), idx)
	case x < 0.96:
		n.insertAt(SaveMetadata, date, 5+r.Int64N(1500), strconv.Itoa(1+r.IntN(len(n.tables))))
	case x < 0.98:
		var loaded []string
		for _, idx := range n.indexes {
			if n.loaded[idx] {
				loaded = append(loaded, idx)
			}
		}
		if len(loaded) == 0 {
			n.insertAt(SaveMetadata, date, 5+r.Int64N(1500), strconv.Itoa(1+r.IntN(len(n.tables))))
			return
		}
		n.insertAt(MemoryLow, date, r.Int64N(50), "")
		k := 1 + r.IntN(min(2, len(loaded)))
		for i := 0; i < k; i++ {
			idx := loaded[r.IntN(len(loaded))]
			if !n.loaded[idx] {
				continue
			}
			n.loaded[idx] = false
			n.insertAt(HyperIndexUnloaded, date+int64(1+i), 1+r.Int64N(200), idx)
		}
	case x < 0.99 && len(s.nodeList) > 1:
		other := s.nodeList[r.IntN(len(s.nodeList))]
		if other == n {
			other = s.nodeList[(n.index+1)%len(s.nodeList)]
		}
		n.insertAt(NodeDown, date, r.Int64N(20), strconv.Itoa(other.number))
	default:
		n.insertAt(ClusterInit, date, 100+r.Int64N(2000), "")
	}
}

func (n *node) insertAt(typ string, date, duration int64, comment string) {
	n.insert(Event{Type: typ, Date: date, Duration: duration, Comment: comment})
}

// initialHistory logs a cluster start earlier in the current day: the node
// started, loaded its tables and indexes, finished preloading and saved
// metadata, all completed before now.
func (s *Simulator) initialHistory(n *node, now int64) {
	t := time.UnixMilli(now).In(s.loc)
	y, m, d := t.Date()
	dayStart := time.Date(y, m, d, 0, 0, 0, 0, s.loc).UnixMilli()
	span := min(int64(20*time.Minute/time.Millisecond), (now-dayStart)/2)
	at := now - span
	if ago := s.cfg.StartedAgo.Milliseconds(); ago > 0 {
		span = min(int64(20*time.Minute/time.Millisecond), ago)
		at = now - ago
	}
	steps := int64(len(n.tables) + len(n.indexes) + 4)
	step := span / steps
	r := s.slotRNG(n, -1, 2)
	dur := func(natural int64) int64 { return max(0, min(natural, step-1)) }
	n.insertAt(ClusterStart, at, dur(20+r.Int64N(60)), "")
	for _, tb := range n.tables {
		at += step
		n.insertAt(TableLoaded, at, dur(100+r.Int64N(2000)), tb)
	}
	for _, idx := range n.indexes {
		at += step
		n.loaded[idx] = true
		n.insertAt(HyperIndexLoaded, at, dur(200+r.Int64N(3000)), idx)
	}
	at += step
	n.insertAt(PreloadFinished, at, dur(r.Int64N(20)), strconv.Itoa(len(n.indexes)))
	at += step
	n.insertAt(SaveMetadata, at, dur(10+r.Int64N(500)), strconv.Itoa(len(n.tables)))
}

// ---- scripted incidents ----

func (s *Simulator) appendEvents(key string, evs ...Event) {
	n := s.byKey[key]
	if n == nil {
		return
	}
	now := s.lockNode(n)
	defer n.mu.Unlock()
	for _, ev := range evs {
		if ev.Date == 0 {
			ev.Date = now
		}
		switch ev.Type {
		case HyperIndexLoaded:
			n.loaded[ev.Comment] = true
		case HyperIndexUnloaded:
			n.loaded[ev.Comment] = false
		}
		n.insert(Event{Type: ev.Type, Date: ev.Date, Duration: ev.Duration, Comment: ev.Comment})
	}
}

func (s *Simulator) reportNodeDown(reporter, down string) {
	n := s.byKey[reporter]
	if n == nil {
		return
	}
	comment := down
	if d := s.byKey[down]; d != nil {
		comment = strconv.Itoa(d.number)
	}
	now := s.lockNode(n)
	defer n.mu.Unlock()
	n.insertAt(NodeDown, now, 3, comment)
}

func (s *Simulator) memoryLowEpisode(key string, indexes ...string) {
	n := s.byKey[key]
	if n == nil {
		return
	}
	now := s.lockNode(n)
	defer n.mu.Unlock()
	if len(indexes) == 0 {
		// Unload every other loaded index.
		i := 0
		for _, idx := range n.indexes {
			if n.loaded[idx] {
				if i%2 == 0 {
					indexes = append(indexes, idx)
				}
				i++
			}
		}
	}
	n.insertAt(MemoryLow, now, 4, "")
	k := int64(1)
	for _, idx := range indexes {
		if !n.loaded[idx] {
			continue // only a loaded index can be unloaded
		}
		n.loaded[idx] = false
		n.insertAt(HyperIndexUnloaded, now+k, 20+k, idx)
		k++
	}
}

func (s *Simulator) reloadIndexes(key string, indexes ...string) {
	n := s.byKey[key]
	if n == nil {
		return
	}
	now := s.lockNode(n)
	defer n.mu.Unlock()
	if len(indexes) == 0 {
		for _, idx := range n.indexes {
			if !n.loaded[idx] {
				indexes = append(indexes, idx)
			}
		}
	}
	at := now
	for i, idx := range indexes {
		n.loaded[idx] = true
		n.insertAt(HyperIndexLoaded, at, 400+int64(i)*150, idx)
		at += 200
	}
}

func (s *Simulator) stopCluster() {
	abort := s.readings().AbortOnStop
	for _, n := range s.nodeList {
		now := s.lockNode(n)
		if abort {
			n.abortRunning(now)
		}
		n.insertAt(ClusterStop, now, 15, "")
		n.stopped = true
		clear(n.loaded)
		n.mu.Unlock()
	}
}

func (s *Simulator) startCluster() {
	for _, n := range s.nodeList {
		now := s.lockNode(n)
		r := s.slotRNG(n, now, 3)
		n.stopped = false
		n.insertAt(ClusterStart, now, 30+r.Int64N(50), "")
		// Loads start one after the other but overlap, lasting seconds, so a
		// listing taken during the start sees them running.
		at := now + 100
		end := at
		for _, tb := range n.tables {
			d := 1500 + r.Int64N(2500)
			n.insertAt(TableLoaded, at, d, tb)
			end = max(end, at+d)
			at += 400 + r.Int64N(400)
		}
		for _, idx := range n.indexes {
			d := 2000 + r.Int64N(4000)
			n.loaded[idx] = true
			n.insertAt(HyperIndexLoaded, at, d, idx)
			end = max(end, at+d)
			at += 300 + r.Int64N(300)
		}
		n.insertAt(PreloadFinished, end, 5+r.Int64N(20), strconv.Itoa(len(n.indexes)))
		n.mu.Unlock()
	}
}

func (s *Simulator) shiftClock(key string, d time.Duration) {
	n := s.byKey[key]
	if n == nil {
		return
	}
	n.mu.Lock()
	n.offsetMS += d.Milliseconds()
	n.mu.Unlock()
}

func (s *Simulator) truth(key string) []Event {
	n := s.byKey[key]
	if n == nil {
		return nil
	}
	s.lockNode(n)
	out := make([]Event, len(n.log))
	copy(out, n.log)
	n.mu.Unlock()
	sort.Slice(out, func(a, b int) bool { return out[a].Seq < out[b].Seq })
	return out
}

// visible returns the Seq of the events a listing can show as completed
// now.
func (s *Simulator) visible(key string) map[int64]bool {
	n := s.byKey[key]
	if n == nil {
		return nil
	}
	rd := s.readings()
	now := s.lockNode(n)
	defer n.mu.Unlock()
	out := map[int64]bool{}
	for i := n.retainedFrom(now, rd); i < len(n.log); i++ {
		if ev := &n.log[i]; ev.Date <= now && shown(ev, now) {
			out[ev.Seq] = true
		}
	}
	return out
}

// countedNow returns the Seq of the events event/count counts now.
func (s *Simulator) countedNow(key string) map[int64]bool {
	n := s.byKey[key]
	if n == nil {
		return nil
	}
	rd := s.readings()
	now := s.lockNode(n)
	defer n.mu.Unlock()
	out := map[int64]bool{}
	for i := n.retainedFrom(now, rd); i < len(n.log); i++ {
		if ev := &n.log[i]; ev.Date <= now && (ev.CompletedAt <= now || rd.CountRunning) {
			out[ev.Seq] = true
		}
	}
	return out
}

func (s *Simulator) nodes() []string {
	out := make([]string, len(s.nodeList))
	for i, n := range s.nodeList {
		out[i] = n.key
	}
	return out
}

func (s *Simulator) tables(key string) []string {
	if n := s.byKey[key]; n != nil {
		return append([]string(nil), n.tables...)
	}
	return nil
}

func (s *Simulator) indexes(key string) []string {
	if n := s.byKey[key]; n != nil {
		return append([]string(nil), n.indexes...)
	}
	return nil
}
