package faults

import (
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// epoch is where every simulated clock starts: mid-morning, so the day's
// listing at first contact holds the simulator's initial history.
var epoch = time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)

const (
	user     = "exporter"
	password = "pa55-Wörd\"quote\\back" // odd characters: they must survive files, JSON and logs redaction
)

// rigOpts sets up a rig; zero values get defaults.
type rigOpts struct {
	nodes   int              // simulated nodes (default 3)
	sim     simulator.Config // Clock, Users and Nodes are filled in when empty
	timeout time.Duration    // console timeout in the config file (default 2s)
	args    []string         // extra exporter flags
	noStart bool             // do not start the exporter
	// front, when set, serves the console through this wrapper of the
	// simulator's handler on a server of the test's own (to observe or
	// alter traffic); the exporter is pointed at it.
	front func(http.Handler) http.Handler
	// consoleTLS, when set, serves the console over HTTPS with this
	// certificate (through a server of the test's own).
	consoleTLS *tls.Certificate
	// consoleYAML is appended to the console section of the configuration
	// (indented by two spaces), e.g. a tls_config.
	consoleYAML string
	// env is added to the exporter's environment (e.g. HTTPS_PROXY).
	env []string
}

// rig is one scenario: a simulated console on loopback with a manual
// clock, a configuration file for it, the exporter process, and the
// bookkeeping that turns the simulator's ground truth into expected counters.
type rig struct {
	t       *testing.T
	clock   *simulator.ManualClock
	sim     *simulator.Simulator
	url     string   // console URL the exporter uses
	extra   string   // consoleYAML
	nodes   []string // configured node keys (host:port), also the node label values
	dir     string
	cfgPath string
	pwPath  string
	timeout time.Duration
	args    []string
	env     []string
	exp     *process

	// scrapeTimeout, when set, is announced with every scrape (Prometheus'
	// X-Prometheus-Scrape-Timeout-Seconds).
	scrapeTimeout time.Duration
	// parseOnly, when set, names the only families scrape parses (the soak
	// reads five of a few hundred, over thousands of scrapes).
	parseOnly map[string]bool

	shift    map[string]int64 // each node's ShiftClock offset, ms
	baseline map[string]int64 // node's now at the first successful poll (counting starts after it)
	high     map[string]int64 // node's highest now at a successful poll
	// settled is a node's highest now at the successful poll before the
	// latest: events completed by then have been visible for a whole poll.
	// A listing cut at the console's cap leaves what it did not show to the
	// next poll's page (two calls a poll, docs/counting.md), so only those
	// events must be counted at every scrape; the newer ones may be.
	settled map[string]int64
	prev    map[string]map[string]float64
}

func newRig(t *testing.T, o rigOpts) *rig {
	t.Helper()
	if o.nodes == 0 {
		o.nodes = 3
	}
	if o.timeout == 0 {
		o.timeout = 2 * time.Second
	}
	clock := simulator.NewManualClock(epoch)
	cfg := o.sim
	cfg.Clock = clock
	if cfg.Users == nil {
		cfg.Users = map[string]string{user: password}
	}
	if cfg.Nodes == nil {
		for i := 0; i < o.nodes; i++ {
			cfg.Nodes = append(cfg.Nodes, simulator.NodeConfig{Host: fmt.Sprintf("core-%d.test", i+1)})
		}
	}
	sim := simulator.New(cfg)
	if err := sim.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	r := &rig{t: t, clock: clock, sim: sim, nodes: sim.Nodes(), dir: t.TempDir(),
		timeout: o.timeout, args: o.args, env: o.env,
		shift: map[string]int64{}, baseline: map[string]int64{}, high: map[string]int64{}, settled: map[string]int64{},
		prev: map[string]map[string]float64{}}
	r.url, r.extra = sim.URL(), o.consoleYAML
	if o.front != nil || o.consoleTLS != nil {
		h := sim.Handler()
		if o.front != nil {
			h = o.front(h)
		}
		srv := httptest.NewUnstartedServer(h)
		// Refused handshakes are what some tests are about; keep them quiet.
		srv.Config.ErrorLog = log.New(io.Discard, "", 0)
		if o.consoleTLS != nil {
			srv.TLS = &tls.Config{Certificates: []tls.Certificate{*o.consoleTLS}}
			srv.StartTLS()
		} else {
			srv.Start()
		}
		t.Cleanup(srv.Close)
		r.url = srv.URL
	}

	r.cfgPath = filepath.Join(r.dir, "indexima.yml")
	r.pwPath = filepath.Join(r.dir, "password")
	r.writePassword(password)
	r.writeConfig(r.nodes)
	if !o.noStart {
		r.start()
	}
	return r
}

func (r *rig) writePassword(p string) {
	r.t.Helper()
	if err := os.WriteFile(r.pwPath, []byte(p+"\n"), 0o600); err != nil {
		r.t.Fatal(err)
	}
}

// configYAML is the configuration of the given simulator node keys.
func (r *rig) configYAML(nodes []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "console:\n  url: %s\n  username: %s\n  password_file: %s\n  timeout: %s\n",
		r.url, user, r.pwPath, r.timeout)
	for _, l := range strings.Split(strings.TrimRight(r.extra, "\n"), "\n") {
		if l != "" {
			b.WriteString("  " + l + "\n")
		}
	}
	b.WriteString("nodes:\n")
	for _, n := range nodes {
		host, port := splitKey(r.t, n)
		fmt.Fprintf(&b, "  - host: %s\n    port: %d\n", host, port)
	}
	return b.String()
}

func (r *rig) writeConfig(nodes []string) {
	r.t.Helper()
	r.writeFile(r.cfgPath, r.configYAML(nodes))
}

func (r *rig) writeFile(path, content string) {
	r.t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		r.t.Fatal(err)
	}
}

func splitKey(t *testing.T, key string) (string, int) {
	i := strings.LastIndexByte(key, ':')
	port, err := strconv.Atoi(key[i+1:])
	if err != nil {
		t.Fatalf("node key %q: %v", key, err)
	}
	return key[:i], port
}

// start runs the exporter on the rig's configuration.
func (r *rig) start(extra ...string) *process {
	r.t.Helper()
	args := append([]string{"--config.file=" + r.cfgPath}, r.args...)
	r.exp = startExporter(r.t, startOpts{args: append(args, extra...), env: r.env})
	return r.exp
}

// now is a node's clock (console clock plus its shift), Unix ms.
func (r *rig) now(n string) int64 { return r.clock.Now().UnixMilli() + r.shift[n] }

func (r *rig) advance(d time.Duration) { r.clock.Advance(d) }

func (r *rig) shiftClock(n string, d time.Duration) {
	r.sim.ShiftClock(n, d)
	r.shift[n] += d.Milliseconds()
}

// scrape fetches /metrics once and updates the bookkeeping: a node that is
// up was polled successfully at its current now. The clock never moves while
// a scrape runs, so that now is exact. Counters must never go down.
func (r *rig) scrape() scrape {
	r.t.Helper()
	text := r.exp.metricsTextWith(r.scrapeTimeout)
	if r.parseOnly != nil {
		text = keepFamilies(text, r.parseOnly)
	}
	return r.observe(parseMetrics(r.t, text))
}

func (r *rig) observe(s scrape) scrape {
	r.t.Helper()
	for _, n := range r.nodes {
		up, ok := s.value("indexima_up", node(n))
		if !ok {
			r.t.Fatalf("no indexima_up for configured node %s", n)
		}
		if up != 1 {
			continue
		}
		now := r.now(n)
		if _, ok := r.baseline[n]; !ok {
			r.baseline[n] = now
		}
		if _, ok := r.high[n]; ok {
			r.settled[n] = r.high[n]
		} else {
			r.settled[n] = now
		}
		r.high[n] = max(r.high[n], now)
		got := s.byLabel("indexima_events_total", node(n), "event")
		for ev, v := range got {
			if v < r.prev[n][ev] {
				r.t.Errorf("node %s: indexima_events_total{event=%q} went down: %g -> %g", n, ev, r.prev[n][ev], v)
			}
		}
		r.prev[n] = got
	}
	return s
}

// forget makes the bookkeeping start afresh for every node, as for an
// exporter restarted without a state file (new baselines, counters from 0).
func (r *rig) forget() {
	r.baseline, r.high, r.settled, r.prev = map[string]int64{}, map[string]int64{}, map[string]int64{}, map[string]map[string]float64{}
}

// tally sums a comparison of counters with the truth.
type tally struct {
	expected int // events the exporter should have counted
	counted  int // sum of indexima_events_total
	lost     int // expected but not counted
	doubled  int // counted beyond the truth
}

func (a *tally) add(b tally) {
	a.expected += b.expected
	a.counted += b.counted
	a.lost += b.lost
	a.doubled += b.doubled
}

func (a tally) String() string {
	return fmt.Sprintf("expected %d, counted %d, lost %d, doubled %d", a.expected, a.counted, a.lost, a.doubled)
}

// want is the truth for node n: by event type, the events that completed
// after the first successful poll and no later than the latest one. No
// counter may be above it.
func (r *rig) want(n string) map[string]float64 { return r.truthUpTo(n, r.high[n]) }

// wantAtLeast is the part of want that must be counted already: the events
// completed by the poll before the latest (settled). No counter may be
// below it. Two scrapes at one clock make the two the same.
func (r *rig) wantAtLeast(n string) map[string]float64 { return r.truthUpTo(n, r.settled[n]) }

func (r *rig) truthUpTo(n string, high int64) map[string]float64 {
	want := map[string]float64{}
	for _, t := range simulator.EventTypes {
		want[t] = 0
	}
	base, ok := r.baseline[n]
	if !ok {
		return want
	}
	for _, ev := range r.sim.Truth(n) {
		if ev.CompletedAt > base && ev.CompletedAt <= high {
			want[ev.Type]++
		}
	}
	return want
}

// check compares every node's counters in s with the truth, reports each
// difference as a test error, and returns the sums.
func (r *rig) check(s scrape) tally {
	r.t.Helper()
	var all tally
	for _, n := range r.nodes {
		all.add(r.checkNode(s, n))
	}
	return all
}

func (r *rig) checkNode(s scrape, n string) tally {
	r.t.Helper()
	if _, ok := r.baseline[n]; !ok {
		r.t.Errorf("node %s was never up", n)
		return tally{}
	}
	want, least := r.want(n), r.wantAtLeast(n)
	got := s.byLabel("indexima_events_total", node(n), "event")
	var tl tally
	for ev := range union(want, got) {
		w, l, g := int(want[ev]), int(least[ev]), int(got[ev])
		tl.expected += w
		tl.counted += g
		switch {
		case g < l:
			tl.lost += l - g
		case g > w:
			tl.doubled += g - w
		}
	}
	for _, ev := range simulator.EventTypes {
		if _, ok := got[ev]; !ok {
			r.t.Errorf("node %s: indexima_events_total{event=%q} missing (all ten types must be present)", n, ev)
		}
	}
	if tl.lost != 0 || tl.doubled != 0 {
		r.t.Errorf("node %s: %s\n got      %s\n want     %s\n at least %s", n, tl, fmtCounts(got), fmtCounts(want), fmtCounts(least))
	}
	return tl
}

func union(a, b map[string]float64) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// settle scrapes without moving the clock until every node is up and has
// nothing more to read at this clock: three scrapes in a row, all nodes up,
// with the same counters and cursors. (The cursor is the newest event shown,
// not a clock: it says nothing of being caught up by itself.) Paging a
// backlog or reading what a cut listing left may take a few polls: at most
// 20 scrapes with every node up. A login backoff still running after a wrong
// password (1 s, doubling, in real time) is waited out by polling every
// 50 ms, for at most two minutes. Two scrapes at one clock make the check
// exact (want and wantAtLeast agree).
func (r *rig) settle() scrape {
	r.t.Helper()
	var s scrape
	var last string
	deadline := time.Now().Add(2 * time.Minute)
	for i, upScrapes, same := 0, 0, 0; i < 2400 && upScrapes < 20 && time.Now().Before(deadline); i++ {
		s = r.scrape()
		up := true
		var sig strings.Builder
		for _, n := range r.nodes {
			u, _ := s.value("indexima_up", node(n))
			cur, _ := s.value("indexima_events_cursor_timestamp_seconds", node(n))
			up = up && u == 1
			fmt.Fprintf(&sig, "%s %v %s;", n, cur, fmtCounts(s.byLabel("indexima_events_total", node(n), "event")))
		}
		if !up {
			same, last = 0, ""
			time.Sleep(50 * time.Millisecond)
			continue
		}
		upScrapes++
		if sig.String() == last {
			same++
		} else {
			same, last = 1, sig.String()
		}
		if same >= 3 {
			return s
		}
	}
	r.t.Fatalf("nodes not up and settled (20 scrapes with all up, or 2 minutes)")
	return s
}

// awaitUp scrapes at the current clock until every node is up. The
// exporter's own waits (a login backoff after a refused password) run on
// its real clock, while a scrape here is a minute of simulated time and a
// few milliseconds of real time: left to run, one second of backoff would
// be hours of the consoles' time, and the verdict would depend on the
// machine's speed. Called when a fault clears, so an outage lasts as long
// as its fault, in simulated time, on any machine.
func (r *rig) awaitUp() scrape {
	r.t.Helper()
	var s scrape
	deadline := time.Now().Add(2 * time.Minute)
	for i := 0; i < 2400 && time.Now().Before(deadline); i++ {
		s = r.scrape()
		up := true
		for _, n := range r.nodes {
			u, _ := s.value("indexima_up", node(n))
			up = up && u == 1
		}
		if up {
			return s
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.t.Fatalf("nodes not up again within 2 minutes of the fault's end")
	return s
}

// run scrapes count times, moving the clock by step before each.
func (r *rig) run(count int, step time.Duration) scrape {
	r.t.Helper()
	var s scrape
	for i := 0; i < count; i++ {
		r.advance(step)
		s = r.scrape()
	}
	return s
}

// run0 moves the clock count times by step without scraping (the exporter
// is down, or not looking); the simulator's log depends only on its clock,
// so the events of that time happen all the same.
func (r *rig) run0(count int, step time.Duration) {
	for i := 0; i < count; i++ {
		r.advance(step)
	}
}
