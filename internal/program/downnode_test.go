package program

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// nodeDownLine is what a test reads of an event log or /events line.
type nodeDownLine struct {
	Node           string `json:"node"`
	Type           string `json:"type"`
	DateMS         int64  `json:"date_ms"`
	Comment        string `json:"comment"`
	DownNode       string `json:"down_node"`
	DownNodeNumber *int   `json:"down_node_number"`
	DownNodeName   string `json:"down_node_name"`
}

// String is how the tests compare lines: reporter, down node, number.
func (l nodeDownLine) String() string {
	number := "-"
	if l.DownNodeNumber != nil {
		number = strconv.Itoa(*l.DownNodeNumber)
	}
	return l.Node + ">" + l.DownNode + "#" + number
}

// nodeDownLines are the NODE_DOWN lines of JSON lines, as strings, sorted.
func nodeDownLines(t *testing.T, lines []string) []string {
	t.Helper()
	var out []string
	for _, s := range lines {
		var l nodeDownLine
		if err := json.Unmarshal([]byte(s), &l); err != nil {
			t.Fatalf("line %q: %v", s, err)
		}
		if l.DownNodeName != "" {
			t.Errorf("a line with down_node_name: %s", s)
		}
		if l.Type == "NODE_DOWN" {
			out = append(out, l.String())
		}
	}
	slices.Sort(out)
	return out
}

// eventsLines are the lines /events answers.
func eventsLines(t *testing.T, r *running, query string) []string {
	t.Helper()
	_, body := r.get("/events" + query)
	var a struct{ Events []json.RawMessage }
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		t.Fatalf("/events: %v\n%s", err, body)
	}
	out := make([]string, len(a.Events))
	for i, e := range a.Events {
		out[i] = string(e)
	}
	return out
}

// fileLines are the lines of a file.
func fileLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// downNodeSeries are the down_node series of /metrics, as
// "family node>down_node=value", sorted.
func downNodeSeries(t *testing.T, exposition string) []string {
	t.Helper()
	var out []string
	for name, f := range parseProbe(t, exposition) {
		if name != "indexima_node_down_reports_total" && name != "indexima_node_down_last_report_timestamp_seconds" {
			continue
		}
		for _, m := range f.Metric {
			node, _ := labelOf(m, "node")
			down, _ := labelOf(m, "down_node")
			v := m.GetCounter().GetValue()
			if m.Gauge != nil {
				v = m.Gauge.GetValue()
			}
			out = append(out, fmt.Sprintf("%s %s>%s=%v", strings.TrimPrefix(name, "indexima_node_down_"), node, down, v))
		}
	}
	slices.Sort(out)
	return out
}

// With node numbers in the configuration, the node a NODE_DOWN reports has
// one name everywhere: the configured name of the node of that number in
// the event log's down_node, on /events, on /status and in the metrics'
// down_node label, and its number in a field of its own
// (down_node_number); a number no node has is that number everywhere.
func TestDownNodeIsOneNameEverywhere(t *testing.T) {
	c := newProbeCluster(t, "prod", "core-1.example", "core-2.example")
	dir := t.TempDir()
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "clusters:\n  prod:\n    console: {url: %q, username: monitor, password: prod-secret}\n    nodes:\n", c.sim.URL())
	for i := 1; i <= 2; i++ {
		host, port, _ := strings.Cut(c.nodes[fmt.Sprintf("core-%d", i)], ":")
		fmt.Fprintf(&cfg, "      - {host: %s, port: %s, name: core-%d, number: %d}\n", host, port, i, i+10)
	}
	out := &brokenStdout{}
	r := startWithStdout(t, out, "--config.file="+writeFile(t, dir, "indexima.yml", cfg.String()), "--events.log=-")
	r.get("/metrics") // first contact
	c.sim.Append(c.nodes["core-1"], simulator.Event{Type: simulator.NodeDown, Duration: 1, Comment: "12"},
		simulator.Event{Type: simulator.NodeDown, Duration: 1, Comment: "7"})
	c.clock.Advance(30 * time.Second)
	_, metrics := r.get("/metrics")

	want := []string{"core-1>7#7", "core-1>core-2#12"}
	if got := nodeDownLines(t, out.written()); !slices.Equal(got, want) {
		t.Errorf("event log: NODE_DOWN lines %v, want %v", got, want)
	}
	if got := nodeDownLines(t, eventsLines(t, r, "?cluster=prod&node=core-1")); !slices.Equal(got, want) {
		t.Errorf("/events: NODE_DOWN lines %v, want %v", got, want)
	}
	var labels []string
	for _, s := range downNodeSeries(t, metrics) {
		if rest, ok := strings.CutPrefix(s, "reports_total "); ok {
			labels = append(labels, rest)
		}
	}
	if want := []string{"core-1>7=1", "core-1>core-2=1"}; !slices.Equal(labels, want) {
		t.Errorf("/metrics: reports %v, want %v", labels, want)
	}
	_, page := r.get("/status")
	card := statusNodes(t, page)["prod"]["core-1"].text
	// An event's row: date, type, duration, then the down node.
	var shown []string
	for _, m := range regexp.MustCompile(`NODE_DOWN \S+ (\S+( \(number \d+\))?)`).FindAllStringSubmatch(card, -1) {
		shown = append(shown, m[1])
	}
	slices.Sort(shown)
	if want := []string{"7", "core-2 (number 12)"}; !slices.Equal(shown, want) {
		t.Errorf("/status: core-1's NODE_DOWN events show %q, want %q:\n%s", shown, want, card)
	}
}

// recordingConsole serves a simulator over loopback and records the
// :time of each lastevents listing asked.
type recordingConsole struct {
	srv   *httptest.Server
	mu    sync.Mutex
	since []int64
}

func newRecordingConsole(t *testing.T, sim *simulator.Simulator) *recordingConsole {
	t.Helper()
	c := &recordingConsole{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, at, ok := strings.Cut(r.URL.Path, "/get/lastevents/"); ok {
			if ms, err := strconv.ParseInt(at, 10, 64); err == nil {
				c.mu.Lock()
				c.since = append(c.since, ms)
				c.mu.Unlock()
			}
		}
		sim.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

// listedFrom tells whether a lastevents listing was asked from date or
// before since the mark (the index of a listing).
func (c *recordingConsole) listedFrom(mark int, date int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.since[mark:] {
		if s <= date {
			return true
		}
	}
	return false
}

func (c *recordingConsole) mark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.since)
}

// Node c (number 3) is reported down by a and b; then c is replaced: a
// reload gives number 3 to the new node d. The reports about c stay c's,
// in the metrics, the event log and /events, after the reload (whose next
// listings read the reports again) and after a restart with the state file
// (whose first listings read them again too): no down_node="d" series, so
// no IndeximaNodeDownReported for d. A report made after the reload is d's.
func TestReplacedNodeInheritsNoReport(t *testing.T) {
	clock := simulator.NewManualClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	var ncs []simulator.NodeConfig
	for i, h := range []string{"a", "b", "c", "d"} {
		ncs = append(ncs, simulator.NodeConfig{Host: h + ".example", Port: 9999, Number: min(i+1, 3)}) // d replaces c
	}
	sim := simulator.New(simulator.Config{Nodes: ncs, Clock: clock})
	console := newRecordingConsole(t, sim)
	dir := t.TempDir()
	config := func(nodes ...string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "console: {url: %q}\nnodes:\n", console.srv.URL)
		for i, n := range nodes {
			fmt.Fprintf(&b, "  - {host: %s.example, port: 9999, name: %s, number: %d}\n", n, n, i+1)
		}
		return b.String()
	}
	cfgPath := writeFile(t, dir, "indexima.yml", config("a", "b", "c"))
	logPath, statePath := filepath.Join(dir, "events.log"), filepath.Join(dir, "state")
	args := []string{"--config.file=" + cfgPath, "--events.log=" + logPath, "--events.state-file=" + statePath}
	r := start(t, args...)
	r.get("/metrics") // first contact

	clock.Advance(10 * time.Second)
	var reports []int64
	for _, reporter := range []string{"a", "b"} {
		sim.ReportNodeDown(reporter+".example:9999", "c.example:9999")
		reports = append(reports, clock.Now().UnixMilli())
	}
	clock.Advance(time.Second)
	_, before := r.get("/metrics")
	reportDate := fmt.Sprint(float64(reports[0]) / 1000)
	want := []string{
		"last_report_timestamp_seconds a>c=" + reportDate, "last_report_timestamp_seconds b>c=" + reportDate,
		"reports_total a>c=1", "reports_total b>c=1"}
	if got := downNodeSeries(t, before); !slices.Equal(got, want) {
		t.Fatalf("before the reload: %v, want %v", got, want)
	}
	wantLines := []string{"a>c#3", "b>c#3"}

	// c replaced by d, which takes its number 3.
	writeFile(t, dir, "indexima.yml", config("a", "b", "d"))
	if code, body := r.do(http.MethodPost, "/-/reload"); code != http.StatusOK {
		t.Fatalf("reload: %d %s", code, body)
	}
	check := func(when string, mark int, wantLines []string) {
		t.Helper()
		clock.Advance(time.Second)
		_, after := r.get("/metrics")
		if !console.listedFrom(mark, reports[0]) {
			t.Fatalf("%s: no listing read the reports again: the test proves nothing", when)
		}
		if got := downNodeSeries(t, after); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v (c's reports, nothing of d)", when, got, want)
		}
		if got := nodeDownLines(t, eventsLines(t, r, "")); len(got)+len(wantLines) > 0 && !slices.Equal(got, wantLines) {
			t.Errorf("%s: /events NODE_DOWN lines %v, want %v", when, got, wantLines)
		}
	}
	check("after the reload", console.mark(), wantLines)

	// A restart with the state file, the new configuration in force.
	r.stop()
	mark := console.mark()
	r = start(t, args...)
	check("after a restart with the state file", mark, nil) // (/events: since the start)
	if got := nodeDownLines(t, fileLines(t, logPath)); !slices.Equal(got, wantLines) {
		t.Errorf("event log: NODE_DOWN lines %v, want %v (each once, named c)", got, wantLines)
	}

	// A report made now, by a, about number 3: d's.
	clock.Advance(10 * time.Second)
	sim.ReportNodeDown("a.example:9999", "d.example:9999")
	clock.Advance(time.Second)
	_, now := r.get("/metrics")
	if got := downNodeSeries(t, now); !slices.Contains(got, "reports_total a>d=1") || !slices.Contains(got, "reports_total a>c=1") {
		t.Errorf("after a report of d: %v, want a>d=1 beside a>c=1", got)
	}
}
