package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// With the clusters form every cluster series carries cluster=<name>, and
// each cluster's nodes follow their own console.
func TestClustersFormLabelsEverySeries(t *testing.T) {
	const password = "Pa55word"
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "password")
	writeSecret(t, pwFile, password)
	prod, staging := newCluster(t, 2, password), newCluster(t, 1, password)
	yml := fmt.Sprintf(`clusters:
  prod:
    console: {url: %q, username: %s, password_file: password}
    nodes: [{host: core-1, name: core-1}, {host: core-2, name: core-2}]
  staging:
    console: {url: %q, username: %s, password_file: password}
    nodes: [{host: core-1, name: core-1}]
`, prod.sim.URL(), user, staging.sim.URL(), user)
	cfgFile := filepath.Join(dir, "indexima.yml")
	if err := os.WriteFile(cfgFile, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	e := startExporter(t, "--config.file="+cfgFile)
	e.scrape() // first contact

	prod.advance(10 * time.Second)
	prod.sim.ReportNodeDown(nodeKey("core-1"), nodeKey("core-2"))
	prod.advance(time.Second)
	staging.advance(10 * time.Second)
	staging.sim.StopCluster()
	staging.advance(time.Second)
	s := e.scrape()

	for _, c := range []struct{ cluster, node string }{{"prod", "core-1"}, {"prod", "core-2"}, {"staging", "core-1"}} {
		if v, ok := s.value("indexima_up", map[string]string{"cluster": c.cluster, "node": c.node}); !ok || v != 1 {
			t.Errorf("indexima_up{cluster=%q,node=%q} = %v (present %v), want 1", c.cluster, c.node, v, ok)
		}
	}
	for _, cl := range []string{"prod", "staging"} {
		if v, ok := s.value("indexima_console_up", map[string]string{"cluster": cl}); !ok || v != 1 {
			t.Errorf("indexima_console_up{cluster=%q} = %v (present %v), want 1", cl, v, ok)
		}
	}
	if v, _ := s.value("indexima_events_total", map[string]string{"cluster": "prod", "node": "core-1", "event": simulator.NodeDown}); v != 1 {
		t.Errorf("prod core-1 NODE_DOWN = %v, want 1", v)
	}
	if v, _ := s.value("indexima_events_total", map[string]string{"cluster": "staging", "node": "core-1", "event": simulator.NodeDown}); v != 0 {
		t.Errorf("staging core-1 NODE_DOWN = %v, want 0: the clusters are mixed", v)
	}
	if v, _ := s.value("indexima_cluster_state", map[string]string{"cluster": "staging", "node": "core-1", "state": "stopped"}); v != 1 {
		t.Errorf("staging core-1 not stopped")
	}
	if v, _ := s.value("indexima_cluster_state", map[string]string{"cluster": "prod", "node": "core-1", "state": "stopped"}); v != 0 {
		t.Errorf("prod core-1 stopped: the clusters are mixed")
	}
	// No cluster series without the cluster label.
	for name, f := range s.families {
		for _, m := range f.GetMetric() {
			hasNode, hasCluster := false, false
			for _, lp := range m.GetLabel() {
				hasNode = hasNode || lp.GetName() == "node"
				hasCluster = hasCluster || lp.GetName() == "cluster"
			}
			if hasNode && !hasCluster {
				t.Errorf("%s has a node label but no cluster label", name)
			}
		}
	}
	testkit.PromtoolCheckMetrics(t, s.text)

	// /probe gives one node of one cluster.
	code, body := e.get("/probe?target=core-1&module=staging")
	if code != 200 {
		t.Fatalf("/probe: %d %s", code, body)
	}
	if v, ok := parse(t, body).value("indexima_up", map[string]string{"cluster": "staging", "node": "core-1"}); !ok || v != 1 {
		t.Errorf("/probe?target=core-1&module=staging: indexima_up = %v (present %v)\n%s", v, ok, body)
	}
	if strings.Contains(body, `cluster="prod"`) || strings.Contains(body, `node="core-2"`) {
		t.Errorf("/probe?target=core-1&module=staging holds other nodes' series:\n%s", body)
	}
}
