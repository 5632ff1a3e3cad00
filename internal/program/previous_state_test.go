package program

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/store"
	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// previousScript is testdata/cde582f-state/script.json (written by its
// make.go): the console the previous version's state was made on.
type previousScript struct {
	Epoch      time.Time              `json:"epoch"`
	Seed       int64                  `json:"seed"`
	Rate       float64                `json:"rate"`
	StartedAgo time.Duration          `json:"started_ago"`
	Nodes      []simulator.NodeConfig `json:"nodes"`
	Reports    []struct {
		Node    string `json:"node"`
		Date    int64  `json:"date"`
		Comment string `json:"comment"`
	} `json:"reports"`
	Scrapes []int64                         `json:"scrapes"`
	Truth   map[string][]previousTruthEvent `json:"truth"`
}

type previousTruthEvent struct {
	Type        string `json:"type"`
	Date        int64  `json:"date"`
	Duration    int64  `json:"duration"`
	Comment     string `json:"comment"`
	CompletedAt int64  `json:"completed_at"`
}

func truthOf(evs []simulator.Event) []previousTruthEvent {
	out := make([]previousTruthEvent, len(evs))
	for i, e := range evs {
		out[i] = previousTruthEvent{Type: e.Type, Date: e.Date, Duration: e.Duration, Comment: e.Comment, CompletedAt: e.CompletedAt}
	}
	slices.SortFunc(out, func(a, b previousTruthEvent) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	return out
}

// The state the previous version (cde582f) wrote, with NODE_DOWN reports
// among its counts (testdata/cde582f-state, README.md there), read by this
// version on the console it was made on, which went on meanwhile: the
// counters go on from the saved ones, nothing lost and nothing counted
// twice (every counter equals the console's events since the previous
// version's first contact, reported equals counted); the reports it
// counted by number are named with this configuration's numbers, and the
// dates of the latest reports, which it did not keep, are learned again
// (one look-back per node), a report older than its first contact
// included. The state this version writes says its schema.
func TestPreviousVersionStateIsRead(t *testing.T) {
	fixture := filepath.Join("testdata", "cde582f-state")
	b, err := os.ReadFile(filepath.Join(fixture, "script.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sc previousScript
	if err := json.Unmarshal(b, &sc); err != nil {
		t.Fatal(err)
	}

	// The console, made again: its log up to the previous version's stop
	// is the one the state was made on.
	clock := simulator.NewManualClock(sc.Epoch)
	sim := simulator.New(simulator.Config{Clock: clock, Seed: sc.Seed, Rate: sc.Rate, StartedAgo: sc.StartedAgo, Nodes: sc.Nodes})
	if err := sim.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	for _, r := range sc.Reports {
		sim.Append(r.Node, simulator.Event{Type: simulator.NodeDown, Date: r.Date, Duration: 3, Comment: r.Comment})
	}
	stop := sc.Scrapes[len(sc.Scrapes)-1]
	clock.Set(time.UnixMilli(stop))
	for _, n := range sc.Nodes {
		want := slices.Clone(sc.Truth[n.Key()])
		slices.SortFunc(want, func(a, b previousTruthEvent) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		if got := truthOf(sim.Truth(n.Key())); !slices.Equal(got, want) {
			t.Fatalf("node %s: the simulator no longer makes the log the fixture was made on (%d events, the fixture's %d): make the fixture again (testdata/cde582f-state/README.md)",
				n.Key(), len(got), len(want))
		}
	}

	// The previous version stopped; this one starts 2 minutes later, with
	// node numbers in its configuration. Meanwhile core-3 reported core-2.
	clock.Advance(time.Minute)
	sim.ReportNodeDown("core-3.example:9999", "core-2.example:9999")
	clock.Advance(time.Minute)
	dir := t.TempDir()
	for _, name := range []string{"state", "state.slots.1"} {
		b, err := os.ReadFile(filepath.Join(fixture, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "console: {url: %q}\nnodes:\n", sim.URL())
	for i, n := range sc.Nodes {
		fmt.Fprintf(&cfg, "  - {host: %s, port: %d, name: core-%d, number: %d}\n", n.Host, n.Port, i+1, i+1)
	}
	statePath := filepath.Join(dir, "state")
	r := start(t, "--config.file="+writeFile(t, dir, "indexima.yml", cfg.String()), "--events.state-file="+statePath)
	var body string
	for range 6 {
		_, body = r.get("/metrics")
		clock.Advance(10 * time.Second)
	}
	clock.Advance(-10 * time.Second) // the clock of the last scrape
	last := clock.Now().UnixMilli()

	contact := sc.Scrapes[0] // the previous version's first contact
	fams := parseProbe(t, body)
	for i, n := range sc.Nodes {
		node := fmt.Sprintf("core-%d", i+1)
		events, reports := map[string]float64{}, map[string]float64{}
		latest := map[string]float64{}
		for _, e := range sim.Truth(n.Key()) {
			if e.CompletedAt > last {
				continue
			}
			if e.Type == simulator.NodeDown {
				down := "core-" + e.Comment
				latest[down] = max(latest[down], float64(e.Date)/1000)
				if e.CompletedAt > contact {
					reports[down]++
				}
			}
			if e.CompletedAt > contact {
				events[e.Type]++
			}
		}
		got := eventCounts(fams, "", node)
		for typ := range got {
			if got[typ] == 0 {
				delete(got, typ)
			}
		}
		if !maps.Equal(got, events) {
			t.Errorf("%s: counted %v, want %v (the console's events since the previous version's first contact)", node, got, events)
		}
		if counted, reported := sumSeries(t, body, "indexima_events_total", "", node), sumSeries(t, body, "indexima_events_reported_total", "", node); counted != reported {
			t.Errorf("%s: counted %v, reported %v", node, counted, reported)
		}
		if got := byDownNode(fams, "indexima_node_down_reports_total", node); !maps.Equal(got, reports) {
			t.Errorf("%s: NODE_DOWN reports %v, want %v", node, got, reports)
		}
		if got := byDownNode(fams, "indexima_node_down_last_report_timestamp_seconds", node); !maps.Equal(got, latest) {
			t.Errorf("%s: latest reports %v, want %v (learned again)", node, got, latest)
		}
	}
	if n := strings.Count(r.stderr.String(), "node-down reports learned again"); n != len(sc.Nodes) {
		t.Errorf("%d look-backs for the node-down reports, want one per node:\n%s", n, r.stderr)
	}
	r.stop()
	st, o, err := store.Open(statePath)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	for key, s := range o.States {
		if s.Schema != tracker.Schema || s.RelearnNodeDown {
			t.Errorf("node %s: saved with schema %d (relearn %v), want %d", key, s.Schema, s.RelearnNodeDown, tracker.Schema)
		}
	}
}

// byDownNode is a family's values for one node, by down_node.
func byDownNode(fams map[string]*dto.MetricFamily, family, node string) map[string]float64 {
	out := map[string]float64{}
	f := fams[family]
	if f == nil {
		return out
	}
	for _, m := range f.Metric {
		if n, _ := labelOf(m, "node"); n != node {
			continue
		}
		down, _ := labelOf(m, "down_node")
		if m.Counter != nil {
			out[down] += m.Counter.GetValue()
		} else {
			out[down] = m.Gauge.GetValue()
		}
	}
	return out
}

// A state a newer version wrote (here a node's state of schema 3) stops
// the start with one line naming the file and what to do, exit status 1,
// and the files as they were: neither set aside nor read with what this
// version knows.
func TestNewerStateStopsTheStart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state")
	s, _, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	newer := &tracker.State{Schema: tracker.Schema + 1, Contacted: true, Cursor: 5}
	if _, err := s.SaveAll([]store.Node{{Key: "/a:9999", State: func() *tracker.State { return newer }}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// (The lock file is the process's, not the state's.)
	files, _ := filepath.Glob(path + ".slots.*")
	files = append(files, path)
	before := map[string]string{}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		before[f] = string(b)
	}
	code, _, stderr := runOnce(t, "--config.file="+writeFile(t, dir, "c.yml", "console: {url: 'http://127.0.0.1:1'}\nnodes: [{host: a}]\n"),
		"--events.state-file="+path, "--web.listen-address=127.0.0.1:0")
	if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, `"`+path+`"`) ||
		!strings.Contains(stderr, "newer version") || !strings.Contains(stderr, "state schema 3") || !strings.Contains(stderr, "run that version") {
		t.Errorf("status %d, stderr %q: want 1 and one line naming the file, the schema and what to do", code, stderr)
	}
	t.Logf("refused: %s", stderr)
	files, _ = filepath.Glob(path + ".slots.*")
	files = append(files, path)
	if len(files) != len(before) {
		t.Errorf("files %v, were %v", files, before)
	}
	for _, f := range files {
		if b, _ := os.ReadFile(f); string(b) != before[f] {
			t.Errorf("%s changed", f)
		}
	}
}
