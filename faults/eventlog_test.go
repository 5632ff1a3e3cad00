package faults

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// logLine is what the test reads of a line of --events.log: its fields as
// docs/events.md gives them, decoded on their own (not with the exporter's
// types).
type logLine struct {
	ID         string `json:"id"`
	Cluster    string `json:"cluster"`
	Node       string `json:"node"`
	Type       string `json:"type"`
	Date       string `json:"date"`
	DateMS     int64  `json:"date_ms"`
	DurationMS *int64 `json:"duration_ms"`
	Comment    string `json:"comment"`
	DownNode   string `json:"down_node"`
}

// key is what tells events apart in a node's log, but their place among
// identical ones.
func (l logLine) key() string {
	d := int64(-1)
	if l.DurationMS != nil {
		d = *l.DurationMS
	}
	return fmt.Sprintf("%s %s %d %d %q", l.Node, l.Type, l.DateMS, d, l.Comment)
}

// readEventLog parses every line of the log; a line that is not one JSON
// event fails the test.
func readEventLog(t *testing.T, path string) []logLine {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []logLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l logLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.ID == "" {
			t.Fatalf("a line of the event log is not an event (%v): %q", err, sc.Text())
		}
		date, err := time.Parse(time.RFC3339Nano, l.Date)
		if err != nil || date.UnixMilli() != l.DateMS || !strings.HasSuffix(l.Date, "Z") || len(l.Date) != len("2006-01-02T15:04:05.000Z") {
			t.Errorf("line %s: date %q and date_ms %d disagree, or not RFC 3339 in UTC with milliseconds", l.ID, l.Date, l.DateMS)
		}
		if (l.Type == simulator.NodeDown) != (l.DownNode != "") || l.DownNode != "" && l.DownNode != l.Comment {
			t.Errorf("line %s: %s with down_node %q, comment %q", l.ID, l.Type, l.DownNode, l.Comment)
		}
		out = append(out, l)
	}
	return out
}

// holdNode is a front of the console that holds the calls of one node
// while held is set, until their client goes away: a poll in flight.
type holdNode struct {
	mu     sync.Mutex
	host   string
	held   bool
	waiter chan struct{} // closed when a call of host is being held
}

func (h *holdNode) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		hold := h.held && r.Header.Get("Monitor-Target-Host") == h.host
		waiter := h.waiter
		h.mu.Unlock()
		if hold {
			select {
			case <-waiter:
			default:
				close(waiter)
			}
			<-r.Context().Done()
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (h *holdNode) set(held bool) chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.held, h.waiter = held, make(chan struct{})
	return h.waiter
}

// The event log holds every event the console's own log says was counted,
// once: through bursts (hundreds of events at one millisecond, identical
// ones among them), running events that complete polls later (one while
// the exporter is down), a restart with the state file, and a SIGKILL of
// the exporter while a scrape is in flight. After the SIGKILL, the events
// of the polls in flight are written again, with the ids they had: the
// only duplicates, listed below.
func TestEventLogHoldsEveryEventOnce(t *testing.T) {
	hold := &holdNode{}
	r := newRig(t, rigOpts{sim: simulator.Config{Seed: 35, Rate: 1}, front: hold.wrap, noStart: true})
	hold.host, _ = splitKey(t, r.nodes[2])
	logPath := filepath.Join(r.dir, "events.log")
	r.args = []string{"--events.state-file=" + filepath.Join(r.dir, "state.json"), "--events.log=" + logPath}
	r.start()
	r.scrape() // first contact

	// burst logs n events at the node's now: a run at one millisecond, a
	// tenth of them identical, and one running for 100 s.
	burst := func(n string, size int, tag string) {
		now := r.now(n)
		evs := make([]simulator.Event, 0, size+1)
		for i := 0; i < size; i++ {
			comment := fmt.Sprintf("%s_%d", tag, i)
			if i%10 == 0 {
				comment = tag + "_same"
			}
			evs = append(evs, simulator.Event{Type: simulator.HyperIndexLoaded, Date: now, Duration: 7, Comment: comment})
		}
		evs = append(evs, simulator.Event{Type: simulator.TableLoaded, Date: now, Duration: 100_000, Comment: tag + "_long"})
		r.sim.Append(n, evs...)
	}
	for i := 0; i < 6; i++ {
		r.advance(20 * time.Second)
		if i%2 == 0 {
			burst(r.nodes[i%3], 300, fmt.Sprintf("b%d", i))
		}
		if i == 3 {
			r.sim.ReportNodeDown(r.nodes[0], r.nodes[1])
		}
		r.scrape()
	}

	// A restart with the state file: a burst and a running event while the
	// exporter is down, another event running across the restart.
	burst(r.nodes[1], 200, "r1")
	r.advance(30 * time.Second)
	r.scrape()
	r.exp.stop()
	burst(r.nodes[0], 200, "down")
	r.run0(6, 30*time.Second)
	r.start()
	r.settle()
	if dups := duplicates(readEventLog(t, logPath)); len(dups) != 0 {
		t.Fatalf("after a clean restart the event log holds duplicates: %v", dups)
	}

	// A SIGKILL while a scrape is in flight: the first two nodes' polls
	// are done and their events written; the third node's is held, so the
	// scrape (and the state file's save after it) never completes.
	for i, n := range r.nodes {
		burst(n, 100, fmt.Sprintf("k%d", i))
	}
	r.advance(5 * time.Second)
	before := len(readEventLog(t, logPath))
	held := hold.set(true)
	go func() { _, _, _ = r.exp.get("/metrics", "", "") }() // fails when the exporter is killed
	<-held
	// Events of the first two nodes completed by now, written by the polls
	// in flight.
	want := 0
	for _, n := range r.nodes[:2] {
		for _, e := range r.sim.Truth(n) {
			if strings.HasPrefix(e.Comment, "k") && e.CompletedAt <= r.now(n) {
				want++
			}
		}
	}
	testkit.WaitFor(t, "the events of the polls in flight in the event log", func() bool {
		got := 0
		for _, l := range readEventLog(t, logPath)[before:] {
			if strings.HasPrefix(l.Comment, "k") {
				got++
			}
		}
		return got >= want
	})
	inflight := map[string]bool{}
	for _, l := range readEventLog(t, logPath)[before:] {
		inflight[l.ID] = true
	}
	r.exp.kill()
	hold.set(false)
	r.start()
	r.advance(200 * time.Second) // every running event completes
	r.scrape()
	s := r.settle()
	r.check(s)

	// The log against the console's truth: every event counted (completed
	// after first contact, by the latest poll) has a line; identical
	// events have as many lines, with distinct ids; nothing else.
	lines := readEventLog(t, logPath)
	byID := map[string]logLine{}
	count := map[string]int{}
	for _, l := range lines {
		if prev, ok := byID[l.ID]; ok && prev.key() != l.key() {
			t.Errorf("id %s names two events:\n %+v\n %+v", l.ID, prev, l)
		}
		byID[l.ID] = l
		count[l.ID]++
	}
	ids := map[string]map[string]bool{} // event key -> its ids
	for id, l := range byID {
		if ids[l.key()] == nil {
			ids[l.key()] = map[string]bool{}
		}
		ids[l.key()][id] = true
	}
	truth := map[string]int{}
	total := 0
	for _, n := range r.nodes {
		for _, e := range r.sim.Truth(n) {
			if e.CompletedAt > r.baseline[n] && e.CompletedAt <= r.high[n] {
				d := e.Duration
				truth[logLine{Node: n, Type: e.Type, DateMS: e.Date, DurationMS: &d, Comment: e.Comment}.key()]++
				total++
			}
		}
	}
	for k, n := range truth {
		if got := len(ids[k]); got != n {
			t.Errorf("%s: %d in the console's log, %d distinct ids in the event log", k, n, got)
		}
	}
	for k := range ids {
		if truth[k] == 0 {
			t.Errorf("%s: in the event log, not in the console's log (or not completed after first contact)", k)
		}
	}
	dups := duplicates(lines)
	for _, id := range dups {
		if !inflight[id] {
			t.Errorf("id %s (%s) is written %d times but was not written by the polls in flight at the SIGKILL", id, byID[id].key(), count[id])
		}
	}
	for id := range inflight {
		if count[id] != 2 {
			t.Errorf("id %s (%s), written by a poll in flight at the SIGKILL, is written %d times; the restarted exporter counts it again from the saved state, so twice", id, byID[id].key(), count[id])
		}
	}
	sort.Slice(dups, func(i, j int) bool { return byID[dups[i]].key() < byID[dups[j]].key() })
	var listing strings.Builder
	for _, id := range dups {
		fmt.Fprintf(&listing, "\n  %s ×%d  %s", id, count[id], byID[id].key())
	}
	t.Logf("event log: %d lines, %d events of the console's log (%d distinct ids); %d written twice after the SIGKILL, all by the polls in flight:%s",
		len(lines), total, len(byID), len(dups), listing.String())
	if len(dups) == 0 || total < 1000 {
		t.Errorf("the scenario did not test what it should: %d duplicates after the SIGKILL, %d events", len(dups), total)
	}
}

// duplicates returns the ids written more than once.
func duplicates(lines []logLine) []string {
	count := map[string]int{}
	var out []string
	for _, l := range lines {
		if count[l.ID]++; count[l.ID] == 2 {
			out = append(out, l.ID)
		}
	}
	return out
}
