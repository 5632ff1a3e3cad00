package program

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
	"github.com/indexima-exporter/indexima_exporter/collector"
	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/internal/web"
	"github.com/indexima-exporter/indexima_exporter/poller"
)

// oneNode is a configuration of one node, core-1:9999, without a client
// (nothing is scraped).
var oneNode = []poller.Cluster{{Nodes: []poller.Node{{Target: apiclient.Node{Host: "core-1", Port: 9999}}}}}

// testExporter is a poller and the exporter reading it.
type testExporter struct {
	*poller.Poller
	exp *collector.Exporter
}

func newTestStateStore(t *testing.T, path string, clusters []poller.Cluster) (*stateStore, testExporter, *strings.Builder) {
	t.Helper()
	p := poller.New(poller.Options{})
	exp, err := collector.New(p, collector.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p.SetClusters(clusters)
	var logs strings.Builder
	s := newStateStore(path, p, log.NewLogfmtLogger(&logs), nil)
	t.Cleanup(func() {
		if s.st != nil {
			s.st.Close()
		}
	})
	return s, testExporter{p, exp}, &logs
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

func TestStateFileStartsWithoutFileAndWritesOne(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s, _, logs := newTestStateStore(t, path, oneNode)
	if err := s.restore(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("no state file written at start: %v", err)
	}
	if !strings.Contains(logs.String(), "no state file yet") {
		t.Errorf("logs: %s", logs)
	}
	// A second start reads what the first wrote, once the first has ended.
	s.st.Close()
	s2, _, logs2 := newTestStateStore(t, path, oneNode)
	if err := s2.restore(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs2.String(), `msg="state restored"`) {
		t.Errorf("logs: %s", logs2)
	}
	s2.st.Close()
	// The manifest, the slot file (written anew at each start) and the
	// lock file, no temporary file.
	if got := strings.Join(dirNames(t, filepath.Dir(path)), " "); got != "state.json state.json.lock state.json.slots.2" {
		t.Errorf("files beside the state file: %s", got)
	}
}

func TestStateFileUnusableIsSetAside(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, _, logs := newTestStateStore(t, path, oneNode)
	if err := s.restore(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path + ".unreadable"); err != nil || string(b) != "{not json" {
		t.Errorf("the unusable file was not kept aside: %q %v", b, err)
	}
	if !strings.Contains(logs.String(), "set aside") {
		t.Errorf("logs: %s", logs)
	}
	if b, err := os.ReadFile(path); err != nil || !strings.HasPrefix(string(b), "{") || string(b) == "{not json" {
		t.Errorf("no fresh state file: %q %v", b, err)
	}
}

func TestStateFileInAMissingDirectoryFailsAtStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "state.json")
	code, _, stderr := runOnce(t, "--config.file="+writeFile(t, t.TempDir(), "c.yml", "console: {url: 'http://127.0.0.1:1'}\nnodes: [{host: a}]\n"),
		"--events.state-file="+path, "--web.listen-address=127.0.0.1:0")
	if code == 0 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "--events.state-file") || !strings.Contains(stderr, "no such file or directory") {
		t.Errorf("status %d, stderr %q: want one line naming the flag and the problem", code, stderr)
	}
}

// A state the collector chokes on (here a null histogram, which made it
// panic when fuzzed) never crashes the start: the engine's Repair drops
// what cannot be trusted, with no trial restore. The file, of format 1, is
// migrated to the store and kept aside.
func TestStateFileTheCollectorChokesOnDoesNotCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	bad := `{"version":1,"nodes":{"/core-1:9999":{"contacted":true,"cursor":1,"durations":{"NODE_DOWN":null}}}}`
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	s, exp, logs := newTestStateStore(t, path, oneNode)
	if err := s.restore(); err != nil {
		t.Fatalf("restore: %v\n%s", err, logs)
	}
	if b, err := os.ReadFile(path + ".migrated"); err != nil || string(b) != bad {
		t.Errorf("the old file was not kept: %q %v", b, err)
	}
	if st := exp.NodeStates()[0].State(); st == nil || st.Cursor != 1 {
		t.Errorf("state not restored: %+v\n%s", st, logs)
	}
	if !strings.Contains(logs.String(), "old_file_kept_as") {
		t.Errorf("logs: %s", logs)
	}
}

// simNode is an exporter polling one simulated node, with a state store.
func simNode(t *testing.T) (*stateStore, testExporter, *simulator.ManualClock, string) {
	t.Helper()
	clock := simulator.NewManualClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	sim := simulator.New(simulator.Config{Nodes: []simulator.NodeConfig{{Host: "core-1", Port: 9999}}, Clock: clock, Rate: 1})
	if err := sim.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	client, err := apiclient.New(apiclient.Config{URL: sim.URL()})
	if err != nil {
		t.Fatal(err)
	}
	clusters := []poller.Cluster{{Client: client, Nodes: []poller.Node{{Target: apiclient.Node{Host: "core-1", Port: 9999}}}}}
	path := filepath.Join(t.TempDir(), "state.json")
	s, exp, _ := newTestStateStore(t, path, clusters)
	if err := s.restore(); err != nil {
		t.Fatal(err)
	}
	return s, exp, clock, path
}

// The state is saved within the collection, so before the scrape's answer
// is sent: a value Prometheus has seen is never newer than the store (a
// crash in between would otherwise restore lower counters, which
// Prometheus takes for a reset and counts again). /metrics and /probe both.
func TestStateSavedBeforeTheScrapeAnswers(t *testing.T) {
	s, exp, clock, path := simNode(t)
	writes := func() uint64 { return s.st.Stats().Writes }
	_, done, err := (savingGatherer{exp.exp.ScrapeGatherer(context.Background()), s.afterMetrics}).Gather()
	done()
	if err != nil {
		t.Fatal(err)
	}
	if writes() != 1 {
		t.Fatalf("/metrics returned with %d node writes, want 1", writes())
	}
	if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), `"/core-1:9999"`) {
		t.Fatalf("the manifest does not list the node after the first scrape: %s %v", b, err)
	}

	clock.Advance(time.Minute)
	h := web.ProbeHandler(exp.exp, s.afterProbe, 0, log.NewNopLogger())
	rec := httptest.NewRecorder()
	h(rec, httptest.NewRequest(http.MethodGet, "/probe?target=core-1:9999", nil))
	if rec.Code != 200 || writes() != 2 {
		t.Fatalf("/probe answered %d with %d node writes, want 200 and 2", rec.Code, writes())
	}
	// A restart reads what the probe wrote.
	s.st.Close()
	s2, exp2, _ := newTestStateStore(t, path, []poller.Cluster{{Nodes: []poller.Node{{Target: apiclient.Node{Host: "core-1", Port: 9999}}}}})
	if err := s2.restore(); err != nil {
		t.Fatal(err)
	}
	if a, b := exp.NodeStates()[0].State(), exp2.NodeStates()[0].State(); b == nil || a.Cursor != b.Cursor {
		t.Errorf("restored cursor %+v, want the probe's %d", b, a.Cursor)
	}
}
