package simulator

import (
	"reflect"
	"strconv"
	"testing"
	"time"
)

func TestInitialHistory(t *testing.T) {
	s, _ := newTestSim(t, Config{})
	dayStart := ms(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	for _, node := range s.Nodes() {
		truth := s.Truth(node)
		tables, indexes := s.Tables(node), s.Indexes(node)
		if len(tables) < 3 || len(indexes) < 3 {
			t.Fatalf("%s: %d tables, %d indexes", node, len(tables), len(indexes))
		}
		var want []string
		want = append(want, ClusterStart+":")
		for _, tb := range tables {
			want = append(want, TableLoaded+":"+tb)
		}
		for _, idx := range indexes {
			want = append(want, HyperIndexLoaded+":"+idx)
		}
		want = append(want, PreloadFinished+":"+strconv.Itoa(len(indexes)), SaveMetadata+":"+strconv.Itoa(len(tables)))
		var got []string
		for i, e := range truth {
			got = append(got, e.Type+":"+e.Comment)
			if e.Date < dayStart || e.CompletedAt > ms(t0) || e.CompletedAt != e.Date+e.Duration {
				t.Errorf("%s: event %+v not completed earlier in the day", node, e)
			}
			if i > 0 && (e.Date < truth[i-1].Date || e.Seq <= truth[i-1].Seq) {
				t.Errorf("%s: history out of order at %d", node, i)
			}
		}
		if !sameStrings(got, want) {
			t.Errorf("%s: history\n got %v\nwant %v", node, got, want)
		}
	}
	if sameStrings(s.Tables(nodeA), s.Tables(nodeB)) {
		t.Error("both nodes have the same tables")
	}
	// Names are deterministic.
	other := New(Config{Clock: NewManualClock(t0), Nodes: []NodeConfig{{Host: "node-a"}, {Host: "node-b"}}})
	if !sameStrings(other.Indexes(nodeB), s.Indexes(nodeB)) {
		t.Error("index names differ between two simulators")
	}
}

func TestInitialHistoryJustAfterMidnight(t *testing.T) {
	clk := NewManualClock(time.Date(2026, 11, 22, 0, 0, 1, 0, time.UTC))
	s := New(Config{Clock: clk, Nodes: []NodeConfig{{Host: "node-a"}}})
	for _, e := range s.Truth(nodeA) {
		if e.Date < ms(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)) || e.CompletedAt > ms(clk.Now()) {
			t.Errorf("event %+v outside the elapsed part of the day", e)
		}
	}
}

// runSteps advances clk through steps, reading the log (as a listing would)
// where read says so, then returns the truth of both nodes.
func runSteps(seed int64, steps []time.Duration, read func(i int) bool) [][]Event {
	clk := NewManualClock(t0)
	s := New(Config{Clock: clk, Seed: seed, Rate: 3, Nodes: []NodeConfig{{Host: "node-a"}, {Host: "node-b"}}})
	for i, d := range steps {
		clk.Advance(d)
		if read(i) {
			_ = s.Truth(nodeA)
		}
		if i == 5 {
			s.MemoryLowEpisode(nodeA)
		}
		if i == 9 {
			s.ReloadIndexes(nodeA)
			s.ReportNodeDown(nodeB, nodeA)
		}
	}
	return [][]Event{s.Truth(nodeA), s.Truth(nodeB)}
}

func TestDeterminism(t *testing.T) {
	steps := []time.Duration{}
	for i := 0; i < 20; i++ {
		steps = append(steps, time.Duration(i*137%1000+1)*time.Millisecond*37)
	}
	a := runSteps(7, steps, func(int) bool { return true })
	b := runSteps(7, steps, func(i int) bool { return i%3 == 0 })
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed and clock steps gave different logs")
	}
	if len(a[0]) <= 20 {
		t.Fatalf("rate 3 over %d steps produced only %d events", len(steps), len(a[0]))
	}
	c := runSteps(8, steps, func(int) bool { return true })
	if reflect.DeepEqual(a, c) {
		t.Fatal("another seed gave the same log")
	}
	if reflect.DeepEqual(a[0][17:], a[1][17:]) {
		t.Fatal("two nodes generated the same background log")
	}
}

func TestBackgroundIsConsistent(t *testing.T) {
	clk := NewManualClock(t0)
	s := New(Config{Clock: clk, Seed: 3, Rate: 2, Nodes: []NodeConfig{{Host: "node-a"}, {Host: "node-b"}}})
	for i := 0; i < 120; i++ { // two simulated hours, in one-minute reads
		clk.Advance(time.Minute)
		_ = s.Truth(nodeA)
	}
	truth := s.Truth(nodeA)
	loaded := map[string]bool{}
	types := map[string]int{}
	long := 0
	for _, e := range truth {
		types[e.Type]++
		switch e.Type {
		case HyperIndexLoaded:
			loaded[e.Comment] = true
		case HyperIndexUnloaded:
			if !loaded[e.Comment] {
				t.Fatalf("unload of %s, which is not loaded: %+v", e.Comment, e)
			}
			loaded[e.Comment] = false
		case SaveMetadata, PreloadFinished:
			if _, err := strconv.Atoi(e.Comment); err != nil {
				t.Errorf("%s comment %q is not a number", e.Type, e.Comment)
			}
		case NodeDown:
			if e.Comment != "2" {
				t.Errorf("NODE_DOWN on node 1 names %q, want node 2", e.Comment)
			}
		}
		if e.Duration >= 3000 {
			long++
		}
	}
	n := len(truth)
	main := types[TableLoaded] + types[HyperIndexLoaded] + types[SaveMetadata]
	if n < 10000 || main < n*85/100 {
		t.Errorf("%d events, %d of the main three types: %v", n, main, types)
	}
	if long < n/50 {
		t.Errorf("only %d of %d events last 3 s or more: too few are seen running", long, n)
	}
	if types[MemoryLow] == 0 || types[HyperIndexUnloaded] == 0 {
		t.Errorf("no memory-low episode in two hours at rate 2: %v", types)
	}
}

func TestIncidents(t *testing.T) {
	s, clk := newTestSim(t, Config{})
	idx := s.Indexes(nodeA)
	truthAfter := func(node string, from int64) []Event {
		var out []Event
		for _, e := range s.Truth(node) {
			if e.Date >= from {
				out = append(out, e)
			}
		}
		return out
	}
	clk.Advance(time.Second)
	now := ms(clk.Now())
	s.ReportNodeDown(nodeA, nodeB)
	if got := truthAfter(nodeA, now); len(got) != 1 || got[0].Type != NodeDown || got[0].Comment != "2" || got[0].Date != now {
		t.Errorf("node down: %+v", got)
	}

	clk.Advance(time.Second)
	now = ms(clk.Now())
	s.MemoryLowEpisode(nodeA, idx[0], idx[1])
	s.MemoryLowEpisode(nodeA, idx[0]) // no longer loaded: MEMORY_LOW alone
	got := truthAfter(nodeA, now)
	if len(got) != 4 || got[0].Type != MemoryLow || got[1].Type != HyperIndexUnloaded || got[1].Comment != idx[0] ||
		got[2].Comment != idx[1] || got[3].Type != MemoryLow {
		t.Errorf("memory low: %+v", got)
	}

	clk.Advance(time.Second)
	now = ms(clk.Now())
	s.ReloadIndexes(nodeA) // reloads what is unloaded
	got = truthAfter(nodeA, now)
	if len(got) != 2 || got[0].Type != HyperIndexLoaded || got[0].Comment != idx[0] || got[1].Comment != idx[1] {
		t.Errorf("reload: %+v", got)
	}

	clk.Advance(time.Minute)
	now = ms(clk.Now())
	s.StopCluster()
	clk.Advance(10 * time.Second)
	start := ms(clk.Now())
	s.StartCluster()
	for _, node := range s.Nodes() {
		got := truthAfter(node, now)
		if got[0].Type != ClusterStop || got[1].Type != ClusterStart || got[1].Date != start {
			t.Fatalf("%s: stop/start: %+v", node, got[:2])
		}
		var tables, indexes []string
		for _, e := range got[2 : len(got)-1] {
			switch e.Type {
			case TableLoaded:
				tables = append(tables, e.Comment)
			case HyperIndexLoaded:
				indexes = append(indexes, e.Comment)
			default:
				t.Errorf("%s: unexpected %s during start", node, e.Type)
			}
		}
		last := got[len(got)-1]
		if !sameStrings(tables, s.Tables(node)) || !sameStrings(indexes, s.Indexes(node)) ||
			last.Type != PreloadFinished || last.Comment != strconv.Itoa(len(s.Indexes(node))) {
			t.Errorf("%s: start loads %v %v then %+v", node, tables, indexes, last)
		}
		for _, e := range got[2:] {
			if e.CompletedAt > last.Date && e.Type != PreloadFinished {
				t.Errorf("%s: %+v completes after PRELOAD_FINISHED", node, e)
			}
		}
	}
	// Two seconds into the start some loads are running.
	clk.Advance(2 * time.Second)
	tok := login(t, s)
	l := listing(t, s, tok, nodeA, "/api/monitor/get/lastevents/"+itoa(start))
	if len(l.Runnings) == 0 || len(l.Reqs) == 0 {
		t.Errorf("2 s into a start: %d reqs, %d runnings", len(l.Reqs), len(l.Runnings))
	}
}

func TestUnknownNodeIsIgnored(t *testing.T) {
	s, _ := newTestSim(t, Config{})
	s.Append("nowhere:1", Event{Type: ClusterInit})
	s.ReportNodeDown("nowhere:1", nodeA)
	s.MemoryLowEpisode("nowhere:1")
	s.ShiftClock("nowhere:1", time.Hour)
	if s.Truth("nowhere:1") != nil || s.Tables("nowhere:1") != nil {
		t.Error("an unknown node has a log")
	}
}

func TestAppendDateZeroIsNow(t *testing.T) {
	s, clk := newTestSim(t, Config{})
	clk.Advance(time.Second)
	s.ShiftClock(nodeA, -time.Minute)
	s.Append(nodeA, Event{Type: ClusterInit})
	truth := s.Truth(nodeA)
	if e := truth[len(truth)-1]; e.Type != ClusterInit || e.Date != ms(clk.Now())-60000 {
		t.Errorf("appended %+v, want date = node now %d", e, ms(clk.Now())-60000)
	}
}
