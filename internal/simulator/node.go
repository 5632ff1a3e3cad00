package simulator

import (
	"net"
	"sort"
	"strconv"
	"sync"
)

func nodeKey(host string, port int) string {
	if port == 0 {
		port = 9999
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// node is one simulated node: its log, its clock offset and the state the
// scenario engine keeps consistent (which indexes are loaded).
type node struct {
	mu sync.Mutex

	cfg     NodeConfig
	key     string
	index   int // position in the configuration (seeds the generator)
	number  int
	version string
	tables  []string
	indexes []string

	offsetMS int64 // ShiftClock offset of the node's clock

	// log is sorted by (Date, Seq) so ranges are binary searches.
	log []Event
	seq int64

	// open holds copies of the events that may still be running (CompletedAt
	// after the watermark), so runnings do not need a scan of the whole log.
	open      []Event
	watermark int64 // highest node time at which open was pruned

	// forgot is the key of the oldest event retention keeps (zero: none
	// forgotten); it only moves forward (retainedFrom).
	forgot logKey

	loaded  map[string]bool // hyperindexes currently loaded
	stopped bool            // between CLUSTER_STOP and CLUSTER_START
	genSlot int64           // next background slot (simulated second) to generate
}

// insert logs ev (Seq assigned here) keeping the log sorted. Caller holds mu.
func (n *node) insert(ev Event) Event {
	n.seq++
	ev.Seq = n.seq
	ev.CompletedAt = ev.Date + ev.Duration
	i := len(n.log)
	if i > 0 && n.log[i-1].Date > ev.Date {
		i = sort.Search(len(n.log), func(k int) bool { return n.log[k].Date > ev.Date })
	}
	if i == len(n.log) {
		n.log = append(n.log, ev)
	} else {
		n.log = append(n.log, Event{})
		copy(n.log[i+1:], n.log[i:])
		n.log[i] = ev
	}
	if ev.CompletedAt > n.watermark || ev.Date > n.watermark {
		n.open = append(n.open, ev)
	}
	return ev
}

// lowerBound returns the first log index with Date >= t. Caller holds mu.
func (n *node) lowerBound(t int64) int {
	return sort.Search(len(n.log), func(k int) bool { return n.log[k].Date >= t })
}

// upperBound returns the first log index with Date > t. Caller holds mu.
func (n *node) upperBound(t int64) int {
	return sort.Search(len(n.log), func(k int) bool { return n.log[k].Date > t })
}

// runningAt returns the events running at now (Date <= now < CompletedAt),
// ordered by date then Seq. Caller holds mu.
func (n *node) runningAt(now int64) []Event {
	if now < n.watermark {
		// The node's clock went back (ShiftClock): events pruned from open
		// may be running again; fall back to a full scan.
		var out []Event
		for _, ev := range n.log {
			if ev.Date <= now && now < ev.CompletedAt {
				out = append(out, ev)
			}
		}
		return out
	}
	keep := n.open[:0]
	var out []Event
	for _, ev := range n.open {
		if ev.CompletedAt > now || ev.Date > now {
			keep = append(keep, ev)
			if ev.Date <= now {
				out = append(out, ev)
			}
		}
	}
	for i := len(keep); i < len(n.open); i++ {
		n.open[i] = Event{}
	}
	n.open = keep
	n.watermark = now
	sort.Slice(out, func(a, b int) bool {
		if out[a].Date != out[b].Date {
			return out[a].Date < out[b].Date
		}
		return out[a].Seq < out[b].Seq
	})
	return out
}

// abortRunning aborts the events running at now (a cluster stop with
// Readings.AbortOnStop): they never complete and are never listed again.
// They stay in open, so that a count of completed events leaves them out.
// Caller holds mu.
func (n *node) abortRunning(now int64) {
	for _, ev := range n.runningAt(now) {
		i := n.indexOf(logKey{ev.Date, ev.Seq})
		if i < len(n.log) && n.log[i].Seq == ev.Seq {
			n.log[i].Aborted, n.log[i].CompletedAt = true, maxInt64
		}
		for j := range n.open {
			if n.open[j].Seq == ev.Seq {
				n.open[j].Aborted, n.open[j].CompletedAt = true, maxInt64
			}
		}
	}
}
