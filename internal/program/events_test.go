package program

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// brokenStdout is a standard output that fails its writes while broken (a
// reader gone, a full disk), then works again.
type brokenStdout struct {
	mu     sync.Mutex
	broken bool
	lines  []string
}

func (w *brokenStdout) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken {
		return 0, errors.New("broken pipe")
	}
	w.lines = append(w.lines, strings.Split(strings.TrimSuffix(string(p), "\n"), "\n")...)
	return len(p), nil
}

func (w *brokenStdout) set(broken bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.broken = broken
}

func (w *brokenStdout) written() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.lines...)
}

// metric is the value of an unlabelled family of the exporter's own.
func metric(t *testing.T, exposition, name string) float64 {
	t.Helper()
	f := parseProbe(t, exposition)[name]
	if f == nil || len(f.Metric) != 1 {
		t.Fatalf("no %s in the exposition", name)
	}
	m := f.Metric[0]
	if m.Counter != nil {
		return m.Counter.GetValue()
	}
	return m.Gauge.GetValue()
}

// An event log that cannot be written loses no count and no line: the
// counters go on, the lines wait (failures and pending in the metrics),
// the state file is not saved meanwhile, and once writes work again every
// event is written once. /events and /status show the events all along,
// from memory.
func TestEventLogThatCannotBeWritten(t *testing.T) {
	c := newProbeCluster(t, "prod", "core-1.example")
	dir := t.TempDir()
	cfg := writeFile(t, dir, "indexima.yml", "clusters:\n"+c.yaml(dir))
	out := &brokenStdout{}
	r := startWithStdout(t, out, "--config.file="+cfg, "--events.log=-", "--events.state-file="+filepath.Join(dir, "state"))
	r.get("/metrics") // first contact
	key := c.nodes["core-1"]

	out.set(true)
	c.sim.Append(key, simulator.Event{Type: simulator.NodeDown, Duration: 2, Comment: "2"},
		simulator.Event{Type: simulator.TableLoaded, Duration: 5, Comment: `<b>"sales"</b>`})
	c.clock.Advance(30 * time.Second)
	_, before := r.get("/metrics")
	writes := metric(t, before, "indexima_exporter_state_writes_total")
	c.sim.Append(key, simulator.Event{Type: simulator.MemoryLow, Duration: 9})
	c.clock.Advance(30 * time.Second)
	r.get("/metrics")
	// The exporter's own metrics are gathered before the scrape's polls:
	// a second scrape at the same clock shows what the first left.
	_, m := r.get("/metrics")
	if got := sumSeries(t, m, "indexima_events_total", "prod", "core-1"); got != 3 {
		t.Errorf("counted %v events while the log fails, want 3", got)
	}
	if f, p := metric(t, m, "indexima_exporter_event_log_write_failures_total"), metric(t, m, "indexima_exporter_event_log_pending_events"); f < 2 || p != 3 {
		t.Errorf("while the log fails: %v failed writes, %v lines pending; want at least 2 and 3", f, p)
	}
	if w := metric(t, m, "indexima_exporter_state_writes_total"); w != writes {
		t.Errorf("the state file was written (%v writes, %v before) while lines wait for the log", w, writes)
	}
	if n := len(out.written()); n != 0 {
		t.Errorf("%d lines written by a broken output", n)
	}
	if !strings.Contains(r.stderr.String(), "cannot write the event log") || strings.Count(r.stderr.String(), "cannot write the event log") != 1 {
		t.Errorf("the failure is not logged once:\n%s", r.stderr)
	}
	code, body := r.get("/events?cluster=prod&node=core-1")
	var answer struct {
		Events []struct{ ID, Type, Comment string }
	}
	if err := json.Unmarshal([]byte(body), &answer); code != 200 || err != nil || len(answer.Events) != 3 {
		t.Fatalf("/events while the log fails: %d %v %s", code, err, body)
	}
	if _, page := r.get("/status"); !strings.Contains(page, "&lt;b&gt;&#34;sales&#34;&lt;/b&gt;") || !strings.Contains(page, "MEMORY_LOW") {
		t.Errorf("/status does not show the latest events, escaped")
	}

	out.set(false)
	c.clock.Advance(30 * time.Second)
	r.get("/metrics")
	_, m = r.get("/metrics")
	if p := metric(t, m, "indexima_exporter_event_log_pending_events"); p != 0 {
		t.Errorf("%v lines still pending once the log can be written", p)
	}
	if w := metric(t, m, "indexima_exporter_state_writes_total"); w <= writes {
		t.Errorf("the state file is not written again once the log is (%v writes)", w)
	}
	lines := out.written()
	var ids []string
	for _, l := range lines {
		var line struct{ ID, Type, Node string }
		if err := json.Unmarshal([]byte(l), &line); err != nil || line.Node != "core-1" {
			t.Errorf("line %q: %v", l, err)
		}
		ids = append(ids, line.ID)
	}
	var want []string
	for _, e := range answer.Events {
		want = append(want, e.ID)
	}
	slices.Sort(ids)
	slices.Sort(want)
	if fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Errorf("lines written %v, want each event of /events once: %v", ids, want)
	}
	if !strings.Contains(r.stderr.String(), "the event log is written again") {
		t.Errorf("the recovery is not logged")
	}
	if _, body := r.get("/"); !strings.Contains(body, `href="/events"`) {
		t.Error("the landing page does not link /events")
	}
}
