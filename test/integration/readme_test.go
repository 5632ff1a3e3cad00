package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// The README is the user's contract: its flag list and its metric table must
// say what the binary really has. Both sides are read from their sources: the
// flags from the binary's --help, the metrics from a real scrape of the
// binary against the simulator, with every optional family made to appear.

var (
	helpFlagRE     = regexp.MustCompile(`(?m)^\s+(?:-\w, )?--(?:\[no-\])?([a-z][a-z0-9.\-]*)`)
	readmeMetricRE = regexp.MustCompile("(?m)^\\| `(indexima_[a-z0-9_]+)`")
)

func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// kingpinBuiltin are the flags every kingpin program has.
var kingpinBuiltin = map[string]bool{"help": true, "help-long": true, "help-man": true}

func TestReadmeListsEveryFlag(t *testing.T) {
	out, err := exec.Command(binary(t), "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("--help: %v\n%s", err, out)
	}
	text := readme(t)
	flags := helpFlagRE.FindAllStringSubmatch(string(out), -1)
	if len(flags) < 10 {
		t.Fatalf("found only %d flags in --help:\n%s", len(flags), out)
	}
	for _, m := range flags {
		if name := m[1]; !kingpinBuiltin[name] && !strings.Contains(text, "`--"+name+"`") {
			t.Errorf("flag --%s is in --help but not in the README's flag table", name)
		}
	}
}

func TestReadmeMetricTableMatchesExposition(t *testing.T) {
	const password = "readme-Pa55"
	c := newCluster(t, 2, password)
	dir := t.TempDir()
	pw, cfg := filepath.Join(dir, "password"), filepath.Join(dir, "indexima.yml")
	writeSecret(t, pw, password)
	c.writeConfig(cfg, pw, nodeName(1), nodeName(2))
	// Every optional family: columns on, a state store, and a label bound of 1 so that
	// table and index names are dropped (label_values_dropped_total).
	// The state store's counters appear with --events.state-file, the
	// event log's with --events.log, the external URL's with
	// --web.external-url.
	e := startExporter(t, "--config.file="+cfg, "--collector.columns", "--label.max-values=1",
		"--events.state-file="+filepath.Join(dir, "state.json"), "--events.log="+filepath.Join(dir, "events.log"),
		"--web.external-url=http://localhost:9897")

	exposed := map[string]bool{}
	gather := func() {
		for name := range e.scrape().families {
			if strings.HasPrefix(name, "indexima_") {
				exposed[name] = true
			}
		}
	}
	gather()
	n := c.sim.Nodes()
	// A failed poll (its reason's series appears at the first failure).
	c.sim.SetNodeFault(n[1], simulator.Fault{Status: 502, Count: 1})
	c.advance(time.Second)
	gather()
	c.sim.ReportNodeDown(n[0], n[1])
	c.sim.MemoryLowEpisode(n[0], c.sim.Indexes(n[0])[:2]...)
	c.sim.StopCluster()
	c.advance(time.Minute)
	gather()
	c.sim.StartCluster()
	for range 5 { // the start's loads complete over simulated minutes
		c.advance(time.Minute)
		gather()
	}

	documented := map[string]bool{}
	for _, m := range readmeMetricRE.FindAllStringSubmatch(readme(t), -1) {
		documented[m[1]] = true
	}
	var missing, stale []string
	for name := range exposed {
		if !documented[name] {
			missing = append(missing, name)
		}
	}
	for name := range documented {
		if !exposed[name] {
			stale = append(stale, name)
		}
	}
	sort.Strings(missing)
	sort.Strings(stale)
	if len(missing) > 0 {
		t.Errorf("exposed but not in the README's metric table: %v", missing)
	}
	if len(stale) > 0 {
		t.Errorf("in the README's metric table but not exposed: %v", stale)
	}
}
