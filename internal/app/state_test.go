package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
	"github.com/indexima-exporter/indexima_exporter/collector"
)

// oneNode is a configuration of one node, core-1:9999, without a client
// (nothing is scraped).
var oneNode = []collector.Cluster{{Nodes: []collector.Node{{Target: apiclient.Node{Host: "core-1", Port: 9999}}}}}

func newTestStateFile(t *testing.T, path string) (*stateFile, *strings.Builder) {
	t.Helper()
	exp, err := collector.New(collector.Options{})
	if err != nil {
		t.Fatal(err)
	}
	exp.SetClusters(oneNode)
	var logs strings.Builder
	return newStateFile(path, exp, func() []collector.Cluster { return oneNode }, log.NewLogfmtLogger(&logs)), &logs
}

func TestStateFileStartsWithoutFileAndWritesOne(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s, logs := newTestStateFile(t, path)
	if err := s.restore(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("no state file written at start: %v", err)
	}
	if !strings.Contains(logs.String(), "no state file yet") {
		t.Errorf("logs: %s", logs)
	}
	// A second start reads what the first wrote.
	s2, logs2 := newTestStateFile(t, path)
	if err := s2.restore(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs2.String(), `msg="state restored"`) {
		t.Errorf("logs: %s", logs2)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("temporary files left beside the state file: %v", entries)
	}
}

func TestStateFileUnusableIsSetAside(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, logs := newTestStateFile(t, path)
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
// panic when fuzzed) never crashes the start.
func TestStateFileTheCollectorChokesOnDoesNotCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	bad := `{"version":1,"nodes":{"/core-1:9999":{"contacted":true,"cursor":1,"durations":{"NODE_DOWN":null}}}}`
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	s, logs := newTestStateFile(t, path)
	if err := s.restore(); err != nil {
		t.Fatalf("restore: %v\n%s", err, logs)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("no state file after restore: %v", err)
	}
}

// The state is saved within the collection, so before the scrape's answer
// is sent: a value Prometheus has seen is never newer than the file (a
// crash in between would otherwise restore lower counters, which Prometheus
// takes for a reset and counts again).
func TestStateSavedBeforeTheScrapeAnswers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s, logs := newTestStateFile(t, path)
	if err := s.restore(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	// Any collector: this configuration has no client to poll with.
	inner := prometheus.NewGauge(prometheus.GaugeOpts{Name: "test_gauge", Help: "test"})
	reg.MustRegister(savingCollector{inner, s.saveAfterCollect})
	if _, err := reg.Gather(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the scrape returned before the state was saved: %v\n%s", err, logs)
	}
}
