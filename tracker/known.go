package tracker

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/fnv"
	"slices"
	"sort"

	"github.com/indexima-exporter/indexima_exporter/event"
)

// known is the multiset of the node's events already counted, or taken into
// the baseline at first contact, dated at or after the window floor. Listings
// are compared with it to tell new events from events read before, and the
// console's event/count with its size to tell whether anything is missing.
//
// An event that is k times in the node's log (identical type, date,
// duration and comment) is k entries. Entries are sorted by (date, fp), 16
// bytes each, so a window of events costs little and range counts are two
// binary searches.
//
// A poll's copy of the set (clone) shares the committed set's memory: the
// set is only ever appended to past the committed entries (which the
// committed set does not see) or made anew (a merge out of order, an
// unsorted baseline), and trimmed by slicing, so the committed entries are
// never written. Polls of one node run one at a time (poller), and a
// discarded poll's appended entries are overwritten by the next poll's.
// Copied at every poll, the entries were a tenth of what a poll allocated.
type known struct {
	entries  []kEntry
	baseline []int64 // dates of the entries taken at first contact (not counted), sorted
}

type kEntry struct {
	date int64
	fp   uint64
}

func (a kEntry) less(b kEntry) bool { return a.date < b.date || a.date == b.date && a.fp < b.fp }

// fingerprint identifies an event by everything the API tells about it. FNV
// is stable across restarts, so fingerprints can be saved to a state file.
func fingerprint(e event.Event) uint64 {
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

// lower returns the index of the first entry not below (date, fp).
func (k *known) lower(e kEntry) int {
	return sort.Search(len(k.entries), func(i int) bool { return !k.entries[i].less(e) })
}

// firstAt returns the index of the first entry dated at or after date.
func (k *known) firstAt(date int64) int {
	return sort.Search(len(k.entries), func(i int) bool { return k.entries[i].date >= date })
}

// count returns how many entries equal e.
func (k *known) count(e kEntry) int {
	i := k.lower(e)
	j := i
	for j < len(k.entries) && k.entries[j] == e {
		j++
	}
	return j - i
}

// countRange returns the entries dated in [lo, hi].
func (k *known) countRange(lo, hi int64) int64 {
	if lo > hi {
		return 0
	}
	if hi == maxInt64 {
		return int64(len(k.entries) - k.firstAt(lo))
	}
	return int64(k.firstAt(hi+1) - k.firstAt(lo))
}

// baselineFrom returns the baseline entries dated at or after date.
func (k *known) baselineFrom(date int64) int64 {
	return int64(len(k.baseline) - sort.Search(len(k.baseline), func(i int) bool { return k.baseline[i] >= date }))
}

// firstDateFrom returns the earliest date known at or after lo (ok false
// when there is none).
func (k *known) firstDateFrom(lo int64) (int64, bool) {
	i := k.firstAt(lo)
	if i == len(k.entries) {
		return 0, false
	}
	return k.entries[i].date, true
}

// maxDate returns the latest date known (ok false when empty).
func (k *known) maxDate() (int64, bool) {
	if len(k.entries) == 0 {
		return 0, false
	}
	return k.entries[len(k.entries)-1].date, true
}

// isolatedDate returns the newest known date with no known event a
// millisecond before or after it, among the newest scan entries; the newest
// date when none is (ok false when the set is empty).
func (k *known) isolatedDate(scan int) (int64, bool) {
	n := len(k.entries)
	if n == 0 {
		return 0, false
	}
	for i := n - 1; i >= 0 && i >= n-scan; {
		d := k.entries[i].date
		j := i
		for j >= 0 && k.entries[j].date == d {
			j--
		}
		if (i == n-1 || k.entries[i+1].date != d+1) && (j < 0 || k.entries[j].date != d-1) {
			return d, true
		}
		i = j
	}
	return k.entries[n-1].date, true
}

// medianDate returns a date m in [lo, hi) that splits the entries of
// [lo, hi] in two halves (for the search's bisection).
func (k *known) medianDate(lo, hi int64) int64 {
	i, j := k.firstAt(lo), k.firstAt(hi+1)
	if j-i < 2 {
		return lo + (hi-lo)/2
	}
	m := k.entries[i+(j-i)/2].date
	if m >= hi {
		m = hi - 1
	}
	if m < lo {
		m = lo
	}
	return m
}

// dateBeforeLast returns the date of the n-th entry counted back from the
// last one dated at or before upTo (ok false when there are fewer).
func (k *known) dateBeforeLast(n int, upTo int64) (int64, bool) {
	end := k.firstAt(upTo + 1)
	if end-n < 0 || n <= 0 {
		return 0, false
	}
	return k.entries[end-n].date, true
}

// merge adds entries (any order) to the set.
func (k *known) merge(add []kEntry) {
	if len(add) == 0 {
		return
	}
	if !slices.IsSortedFunc(add, cmpEntry) {
		slices.SortFunc(add, cmpEntry)
	}
	if len(k.entries) == 0 || !add[0].less(k.entries[len(k.entries)-1]) {
		k.entries = appendEntries(k.entries, add) // the usual case: newer than everything
		return
	}
	old := k.entries
	out := make([]kEntry, 0, len(old)+len(add))
	i, j := 0, 0
	for i < len(old) && j < len(add) {
		if add[j].less(old[i]) {
			out = append(out, add[j])
			j++
		} else {
			out = append(out, old[i])
			i++
		}
	}
	out = append(out, old[i:]...)
	out = append(out, add[j:]...)
	k.entries = out
}

// appendEntries appends add to entries, in memory of an eighth more than
// they need (or twice add, for the batches of a long response) when
// entries has no room. append's growth (up to twice what it held) was
// most of what a node's known events took: a poll's copy of them (clone)
// is made to their size, then grown by the poll's new events, and kept.
func appendEntries(entries, add []kEntry) []kEntry {
	if n := len(entries) + len(add); n > cap(entries) {
		grown := make([]kEntry, len(entries), n+max(n/8, len(add)))
		copy(grown, entries)
		entries = grown
	}
	return append(entries, add...)
}

func cmpEntry(a, b kEntry) int {
	switch {
	case a.less(b):
		return -1
	case b.less(a):
		return 1
	}
	return 0
}

// addBaseline records the dates of baseline entries, in new memory: the
// sort would otherwise move the committed set's dates.
func (k *known) addBaseline(dates []int64) {
	k.baseline = slices.Concat(k.baseline, dates)
	slices.Sort(k.baseline)
}

// trimBelow forgets the entries dated before floor and returns how many
// there were, and how many of them were baseline entries.
func (k *known) trimBelow(floor int64) (removed, removedBaseline int64) {
	i := k.firstAt(floor)
	if i > 0 {
		removed = int64(i)
		// Sliced, not moved down: the memory may be the committed set's.
		// The next growth (appendEntries) copies only what is left.
		k.entries = k.entries[i:]
	}
	b := sort.Search(len(k.baseline), func(i int) bool { return k.baseline[i] >= floor })
	if b > 0 {
		removedBaseline = int64(b)
		k.baseline = k.baseline[b:]
	}
	return removed, removedBaseline
}

// clone is the set a poll works on: it shares k's memory (see known).
func (k known) clone() known { return k }

// ---- dedup of one response ----

// response holds what one listing response met so far. Listings overlap
// (lastevents repeats what is near the cursor, pages share their boundary
// millisecond) and a node may log identical events: if one response holds
// an event k times and the set holds it c times, k-c of them are new. The
// set is not modified while the response is read (what it adds waits in
// added), so c is the count from before the response.
type response struct {
	occ   map[kEntry]occurrence
	date  int64
	added []kEntry
	// ascending is true while the response's dates never went down, newest
	// is its newest date (met tells they are set).
	met       bool
	ascending bool
	newest    int64
}

type occurrence struct {
	seen   int32 // occurrences in this response
	merged int32 // of this response's additions, those already merged into the set
}

// occReset bounds the occurrences a response remembers: the map is cleared
// when the date changes and it holds more than this. Listings are ordered by
// date, so identical events (same date) are met together.
const occReset = 4096

// observe records one occurrence of e in the response and reports whether it
// is new: 0 when it is not, otherwise its place among the identical events
// at its millisecond (1 for the first; the response's occurrences before it
// are those the set already held, or new ones of this response). A new
// occurrence is staged in r.added.
func (k *known) observe(r *response, e kEntry) int {
	if r.occ == nil {
		r.occ = map[kEntry]occurrence{}
	}
	switch {
	case !r.met:
		r.met, r.ascending, r.newest, r.date = true, true, e.date, e.date
	case e.date != r.date:
		if e.date < r.date {
			r.ascending = false
		}
		r.newest = max(r.newest, e.date)
		if len(r.occ) > occReset {
			clear(r.occ)
		}
		r.date = e.date
	}
	o := r.occ[e]
	o.seen++
	nth := 0
	if int(o.seen) > k.count(e)-int(o.merged) {
		r.added = append(r.added, e)
		nth = int(o.seen)
	}
	r.occ[e] = o
	return nth
}

// flush merges what the response added so far into the set (a very large
// response, so that memory stays bounded); the response goes on.
func (k *known) flush(r *response) {
	for _, e := range r.added {
		if o, ok := r.occ[e]; ok {
			o.merged++
			r.occ[e] = o
		}
	}
	k.merge(r.added)
	r.added = r.added[:0]
}

// end merges the response's additions and resets it for the next response.
func (k *known) end(r *response) {
	k.merge(r.added)
	r.added = r.added[:0]
	clear(r.occ)
	r.date, r.met = 0, false
}

// ---- state file encoding ----

// knownJSON is the saved form: entries as base64 of (date delta, fp)
// varint pairs, about 10 bytes an entry, so a window of a busy node does not
// make the state file large.
type knownJSON struct {
	Entries  string `json:"entries"`
	Baseline string `json:"baseline,omitempty"`
}

func (k known) MarshalJSON() ([]byte, error) {
	buf := make([]byte, 0, len(k.entries)*12)
	var prev int64
	for _, e := range k.entries {
		buf = binary.AppendVarint(buf, e.date-prev)
		buf = binary.AppendUvarint(buf, e.fp)
		prev = e.date
	}
	out := knownJSON{Entries: base64.StdEncoding.EncodeToString(buf)}
	if len(k.baseline) > 0 {
		buf = buf[:0]
		prev = 0
		for _, d := range k.baseline {
			buf = binary.AppendVarint(buf, d-prev)
			prev = d
		}
		out.Baseline = base64.StdEncoding.EncodeToString(buf)
	}
	return json.Marshal(out)
}

var errKnownEncoding = errors.New("known events: bad encoding")

func (k *known) UnmarshalJSON(b []byte) error {
	var in knownJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	buf, err := base64.StdEncoding.DecodeString(in.Entries)
	if err != nil {
		return errKnownEncoding
	}
	k.entries = nil // new memory: k may share a committed set's
	var prev int64
	for len(buf) > 0 {
		d, n := binary.Varint(buf)
		if n <= 0 {
			return errKnownEncoding
		}
		buf = buf[n:]
		fp, m := binary.Uvarint(buf)
		if m <= 0 {
			return errKnownEncoding
		}
		buf = buf[m:]
		prev += d
		k.entries = append(k.entries, kEntry{date: prev, fp: fp})
	}
	buf, err = base64.StdEncoding.DecodeString(in.Baseline)
	if err != nil {
		return errKnownEncoding
	}
	k.baseline = nil
	prev = 0
	for len(buf) > 0 {
		d, n := binary.Varint(buf)
		if n <= 0 {
			return errKnownEncoding
		}
		buf = buf[n:]
		prev += d
		k.baseline = append(k.baseline, prev)
	}
	// A file may be damaged or edited: keep the invariants (sorted).
	if !slices.IsSortedFunc(k.entries, cmpEntry) {
		slices.SortFunc(k.entries, cmpEntry)
	}
	slices.Sort(k.baseline)
	return nil
}

const (
	maxInt64 = int64(^uint64(0) >> 1)
	minInt64 = -maxInt64 - 1
)
