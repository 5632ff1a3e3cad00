package integration

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

const (
	user          = "monitor"
	tokenLifetime = 10 * time.Minute
	// consoleTimeout bounds each call; a hanging node costs one timeout.
	consoleTimeout = 5 * time.Second
)

// cluster is the simulated console with its manual clock, and what the test
// learned of each node's first contact.
type cluster struct {
	t        *testing.T
	sim      *simulator.Simulator
	clock    *simulator.ManualClock
	dayStart int64
	first    map[string]int64 // node name -> console time of its first contact
	cursor   map[string]int64 // node name -> its cursor at the latest successful poll, ms
	lastOK   map[string]int64 // node name -> node time of its latest successful poll
	lastSeq  map[string]int64 // node name -> latest Seq in its log at that poll
}

func nodeName(i int) string    { return fmt.Sprintf("core-%d", i) }
func nodeVersion(i int) string { return fmt.Sprintf("2024.%d.7", i) }
func nodeKey(name string) string {
	return simulator.NodeConfig{Host: name, Port: 9999}.Key()
}

func newCluster(t *testing.T, nodes int, password string) *cluster {
	t.Helper()
	// Noon: the day's listing holds the whole initial history.
	start := time.Date(2026, time.March, 10, 12, 0, 0, 0, time.UTC)
	clock := simulator.NewManualClock(start)
	cfg := simulator.Config{
		Users:         map[string]string{user: password},
		TokenLifetime: tokenLifetime,
		Clock:         clock,
		Seed:          7,
		Rate:          0.02,
	}
	for i := 1; i <= nodes; i++ {
		cfg.Nodes = append(cfg.Nodes, simulator.NodeConfig{Host: nodeName(i), Port: 9999, Version: nodeVersion(i)})
	}
	sim := simulator.New(cfg)
	if err := sim.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	day := time.Date(start.Year(), start.Month(), start.Day(), 0, 0, 0, 0, time.UTC)
	return &cluster{t: t, sim: sim, clock: clock, dayStart: day.UnixMilli(),
		first: map[string]int64{}, cursor: map[string]int64{}, lastOK: map[string]int64{}, lastSeq: map[string]int64{}}
}

// writeConfig writes the exporter's configuration for the named nodes.
func (c *cluster) writeConfig(path, passwordFile string, nodes ...string) {
	c.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "console:\n  url: %s\n  username: %s\n  password_file: %s\n  timeout: %s\nnodes:\n",
		c.sim.URL(), user, passwordFile, consoleTimeout)
	for _, n := range nodes {
		fmt.Fprintf(&b, "  - {host: %s, port: 9999, name: %s}\n", n, n)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		c.t.Fatal(err)
	}
}

func (c *cluster) now() int64 { return c.clock.Now().UnixMilli() }

// observe takes a scrape: nodes scraped for the first time get their
// first contact at the console's time then (counting starts after it);
// every node in up gets lastOK = now. The cursor (the newest event shown)
// is never ahead of the console's clock and never goes back.
func (c *cluster) observe(s *scrape, up ...string) {
	c.t.Helper()
	for _, n := range up {
		v, ok := s.value("indexima_up", map[string]string{"node": n})
		if !ok || v != 1 {
			c.t.Fatalf("indexima_up{node=%q} = %v (present %v), want 1\n%s", n, v, ok, s.text)
		}
		cur, ok := s.value("indexima_events_cursor_timestamp_seconds", map[string]string{"node": n})
		ms := int64(math.Round(cur * 1000))
		if !ok || ms <= 0 || ms > c.now() || ms < c.cursor[n] {
			c.t.Errorf("cursor of %s = %v (present %v): want at most the console's clock %d ms and at least the previous cursor %d ms", n, cur, ok, c.now(), c.cursor[n])
		}
		c.cursor[n] = ms
		if _, seen := c.first[n]; !seen {
			c.first[n] = c.now()
		}
		c.lastOK[n] = c.now()
		c.lastSeq[n] = -1
		for _, ev := range c.sim.Truth(nodeKey(n)) {
			c.lastSeq[n] = max(c.lastSeq[n], ev.Seq)
		}
	}
}

// verify checks every contract metric of the nodes against the truth.
func (c *cluster) verify(s *scrape, step string, nodes ...string) {
	c.t.Helper()
	var diffs []string
	for _, n := range nodes {
		// A node whose latest poll failed shows its log as it was at the
		// latest successful poll, which may be at the same clock time as
		// events inserted since: those are told apart by Seq.
		var truth []simulator.Event
		for _, ev := range c.sim.Truth(nodeKey(n)) {
			if ev.Seq <= c.lastSeq[n] {
				truth = append(truth, ev)
			}
		}
		x := expect(truth, c.dayStart, c.first[n], c.lastOK[n])
		diffs = append(diffs, check(s, n, x)...)
	}
	if len(diffs) > 0 {
		c.t.Errorf("%s: the scrape disagrees with the simulator's truth:\n  %s", step, strings.Join(diffs, "\n  "))
	}
}

func (c *cluster) advance(d time.Duration) { c.clock.Advance(d) }

func writeSecret(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestExporterFollowsTheSimulatedCluster(t *testing.T) {
	const password = "first-Pa55word"
	c := newCluster(t, 3, password)
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "password")
	writeSecret(t, pwFile, password)
	cfgFile := filepath.Join(dir, "indexima.yml")
	all := []string{nodeName(1), nodeName(2), nodeName(3)}
	c.writeConfig(cfgFile, pwFile, all...)
	e := startExporter(t, "--config.file="+cfgFile)

	// First contact: nothing counted, gauges from the day's listing.
	s := e.scrape()
	c.observe(s, all...)
	c.verify(s, "first contact", all...)
	if v, _ := s.value("indexima_console_up", map[string]string{}); v != 1 {
		t.Errorf("indexima_console_up = %v, want 1", v)
	}
	for i, n := range all {
		if v, ok := s.value("indexima_node_info", map[string]string{"node": n, "version": nodeVersion(i + 1)}); !ok || v != 1 {
			t.Errorf("indexima_node_info{node=%q,version=%q} = %v (present %v), want 1", n, nodeVersion(i+1), v, ok)
		}
	}

	// Background events, a node-down report, a memory-low episode.
	c.advance(30 * time.Second)
	c.sim.ReportNodeDown(nodeKey(all[0]), nodeKey(all[1]))
	c.sim.MemoryLowEpisode(nodeKey(all[2]))
	c.advance(5 * time.Second)
	s = e.scrape()
	c.observe(s, all...)
	c.verify(s, "node down and memory low", all...)
	if v := s.byLabel("indexima_events_total", all[2], "event")[simulator.HyperIndexUnloaded]; v == 0 {
		t.Errorf("no HYPER_INDEX_UNLOADED counted on %s after a memory-low episode", all[2])
	}

	// Cluster stop, then a start observed while tables load, then settled.
	c.sim.StopCluster()
	c.advance(20 * time.Second)
	s = e.scrape()
	c.observe(s, all...)
	c.verify(s, "cluster stopped", all...)
	c.sim.StartCluster()
	c.advance(time.Second)
	s = e.scrape()
	c.observe(s, all...)
	c.verify(s, "cluster starting", all...)
	if len(s.byLabel("indexima_events_running", all[0], "event")) == 0 {
		t.Errorf("no running event shown one second into a cluster start")
	}
	c.advance(time.Minute)
	s = e.scrape()
	c.observe(s, all...)
	c.verify(s, "cluster started", all...)

	// A node answering 502 and a node hanging: both down, the third right,
	// nothing of theirs applied.
	c.sim.SetNodeFault(nodeKey(all[1]), simulator.Fault{Status: 502})
	c.sim.SetNodeFault(nodeKey(all[2]), simulator.Fault{Hang: true})
	c.sim.ReportNodeDown(nodeKey(all[0]), nodeKey(all[2]))
	c.sim.ReportNodeDown(nodeKey(all[1]), nodeKey(all[2]))
	c.advance(10 * time.Second)
	s = e.scrape()
	for _, n := range all[1:] {
		if v, ok := s.value("indexima_up", map[string]string{"node": n}); !ok || v != 0 {
			t.Errorf("indexima_up{node=%q} = %v (present %v) with the node failing, want 0", n, v, ok)
		}
	}
	c.observe(s, all[0])
	c.verify(s, "two nodes failing", all...) // failing nodes keep their last good state

	// Faults cleared: the failed nodes catch up, nothing lost.
	c.sim.ClearFaults()
	c.advance(5 * time.Second)
	s = e.scrape()
	c.observe(s, all...)
	c.verify(s, "faults cleared", all...)

	// The token expires: renewed with exactly one login.
	logins := c.sim.Stats().Logins
	loginsMetric, _ := s.value("indexima_exporter_logins_total", map[string]string{"result": "success"})
	c.advance(tokenLifetime + time.Minute)
	s = e.scrape()

	c.observe(s, all...)
	c.verify(s, "token expired", all...)
	if got := c.sim.Stats().Logins; got != logins+1 {
		t.Errorf("logins after the token expired: %d, want exactly one more than %d", got, logins)
	}
	// The exporter's own counter shows that login in the same scrape.
	if v, _ := s.value("indexima_exporter_logins_total", map[string]string{"result": "success"}); v != loginsMetric+1 {
		t.Errorf("indexima_exporter_logins_total{result=\"success\"} = %v after the token expired, want %v", v, loginsMetric+1)
	}

	// The real scrape passes promtool's lint.
	testkit.PromtoolCheckMetrics(t, s.text)
}

func TestReloadOnSIGHUP(t *testing.T) {
	const password = "first-Pa55word"
	c := newCluster(t, 4, password)
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "password")
	writeSecret(t, pwFile, password)
	cfgFile := filepath.Join(dir, "indexima.yml")
	before := []string{nodeName(1), nodeName(2), nodeName(3)}
	c.writeConfig(cfgFile, pwFile, before...)
	e := startExporter(t, "--config.file="+cfgFile)

	s := e.scrape()
	c.observe(s, before...)
	c.advance(20 * time.Second)
	c.sim.ReportNodeDown(nodeKey(nodeName(2)), nodeKey(nodeName(1)))
	c.advance(time.Second)
	s = e.scrape()
	c.observe(s, before...)
	c.verify(s, "before reload", before...)
	kept := s.byLabel("indexima_events_total", nodeName(2), "event")

	// core-1 removed, core-4 added.
	after := []string{nodeName(2), nodeName(3), nodeName(4)}
	c.writeConfig(cfgFile, pwFile, after...)
	e.signal(syscall.SIGHUP)
	testkit.WaitFor(t, "core-4 in /config after SIGHUP", func() bool { _, b := e.get("/config"); return strings.Contains(b, "name: core-4") })

	s = e.scrape()
	if s.hasNode(nodeName(1)) {
		t.Errorf("series of the removed node core-1 are still exported")
	}
	c.observe(s, after...) // core-4's first contact
	if got := s.byLabel("indexima_events_total", nodeName(2), "event"); fmt.Sprint(got) != fmt.Sprint(kept) {
		t.Errorf("core-2 counters changed across the reload: %v, before %v", got, kept)
	}
	c.verify(s, "right after reload", after...)
	c.advance(30 * time.Second)
	c.sim.MemoryLowEpisode(nodeKey(nodeName(4)))
	c.sim.ReportNodeDown(nodeKey(nodeName(4)), nodeKey(nodeName(3)))
	c.advance(time.Second)
	s = e.scrape()
	c.observe(s, after...)
	c.verify(s, "after reload", after...)

	// A rotated password: the console and the file change, a reload reads it.
	const rotated = "second-Pa55word"
	c.sim.SetPassword(user, rotated)
	c.sim.RevokeTokens()
	writeSecret(t, pwFile, rotated)
	e.signal(syscall.SIGHUP)
	testkit.WaitFor(t, "the second reload in the log", func() bool {
		return strings.Count(e.stderr.String(), `msg="configuration reloaded"`) >= 2
	})
	logins := c.sim.Stats().Logins
	c.advance(time.Second)
	s = e.scrape()
	c.observe(s, after...)
	c.verify(s, "after password rotation", after...)
	if c.sim.Stats().Logins != logins+1 {
		t.Errorf("logins with the rotated password: %d, want %d", c.sim.Stats().Logins, logins+1)
	}

	// A bad file is refused; the old configuration keeps running.
	if err := os.WriteFile(cfgFile, []byte("console: {url: 'ftp://x'}\nnodes: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.signal(syscall.SIGHUP)
	testkit.WaitFor(t, "the refusal in the log", func() bool { return strings.Contains(e.stderr.String(), "configuration refused") })
	c.advance(time.Second)
	s = e.scrape()
	c.observe(s, after...)
	c.verify(s, "after a refused reload", after...)
	if strings.Contains(e.stderr.String(), password) || strings.Contains(e.stderr.String(), rotated) {
		t.Error("a password is in the exporter's log")
	}
}

func TestBadConfigurationEndsWithOneLine(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "x.yml")
	if err := os.WriteFile(cfg, []byte("console:\n  url: http://127.0.0.1:1\n  foo: 1\nnodes: [{host: a}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+cfg, "--web.listen-address=127.0.0.1:0")
	var stderr testkit.SyncBuffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 {
		t.Fatalf("exit: %v, want a non-zero status", err)
	}
	want := `indexima_exporter: config file "` + cfg + `": line 3: unknown key "foo" in console` + "\n"
	if stderr.String() != want {
		t.Errorf("stderr = %q, want %q", stderr.String(), want)
	}
}
