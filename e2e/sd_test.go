package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// shippedProbeConfig is the shipped one-target-per-node configuration, and
// the address it expects the exporter at.
const (
	shippedProbeConfig = "../deploy/prometheus/prometheus-probe.yml"
	shippedAddress     = "localhost:9897"
)

// TestProbeTargetsDiscoveredFromTheExporter runs the shipped
// prometheus-probe.yml (its scrape jobs as they are, with the exporter's
// address, intervals and the discovery refresh set for the test) against
// the exporter binary with --scrape.probe-only and two clusters: Prometheus
// learns every node from /sd alone and scrapes each through
// /probe?target=<host:port>&module=<cluster>; after a reload of the
// exporter's configuration that removes a node and adds another, its
// targets follow. On both Prometheus lines.
func TestProbeTargetsDiscoveredFromTheExporter(t *testing.T) {
	for _, line := range testkit.PrometheusLines {
		t.Run("prometheus-"+line.Name, func(t *testing.T) { discoveredProbes(t, line) })
	}
}

// sdNode is a node of the test's configuration: its cluster, its name and
// the target Prometheus must probe.
type sdNode struct{ cluster, name, target string }

func discoveredProbes(t *testing.T, line testkit.PrometheusLine) {
	promBin := line.Prometheus(t)
	dir := t.TempDir()
	bin := testkit.ExporterBinary(t)
	sim := simulator.New(simulator.Config{Users: map[string]string{consoleUser: consolePassword}, Rate: 0.2,
		Nodes: []simulator.NodeConfig{{Host: "node1.test"}, {Host: "node2.test"}, {Host: "node3.test"}, {Host: "node4.test"}}})
	if err := sim.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	keys := sim.Nodes()
	node := func(cluster string, i int) sdNode {
		return sdNode{cluster: cluster, name: fmt.Sprintf("node%d", i+1), target: keys[i]}
	}

	// Two clusters on the one simulated console: prod and staging.
	exp := newExporter(t, bin, dir, sim)
	exp.args = []string{"--scrape.probe-only"}
	configure := func(nodes ...sdNode) {
		t.Helper()
		var b strings.Builder
		b.WriteString("clusters:\n")
		for _, cluster := range []string{"prod", "staging"} {
			fmt.Fprintf(&b, "  %s:\n    console: {url: %q, username: %s, password_file: password, timeout: 5s}\n    nodes:\n", cluster, sim.URL(), consoleUser)
			for _, n := range nodes {
				if n.cluster == cluster {
					host, port, _ := strings.Cut(n.target, ":")
					fmt.Fprintf(&b, "      - {host: %s, port: %s, name: %s}\n", host, port, n.name)
				}
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "indexima.yml"), []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	before := []sdNode{node("prod", 0), node("prod", 1), node("staging", 2)}
	configure(before...)
	exp.start(t)

	prom := startPrometheus(t, promBin, dir, nil, probeJobs(t, exp.addr))
	waitProbeTargets(t, prom, before)
	// The exporter's own job polls no node (--scrape.probe-only): every
	// indexima_up comes from a probe, labelled with its node's target.
	ups, err := prom.query(`indexima_up`)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ups {
		if s.Metric["job"] != "indexima" {
			t.Errorf("indexima_up from job %q: the exporter's /metrics polled a node", s.Metric["job"])
		}
	}

	// Reload: prod's node2 removed, staging's node4 added.
	after := []sdNode{node("prod", 0), node("staging", 2), node("staging", 3)}
	configure(after...)
	req, err := http.NewRequest(http.MethodPost, "http://"+exp.addr+"/-/reload", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /-/reload: %s", resp.Status)
	}
	waitProbeTargets(t, prom, after)
	prom.checkScrapesClean(t)
}

// probeJobs returns the scrape jobs of the shipped prometheus-probe.yml for
// an exporter at addr: the address replaced where the file writes it, the
// scrapes and the discovery every second.
func probeJobs(t *testing.T, addr string) string {
	t.Helper()
	data, err := os.ReadFile(shippedProbeConfig)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if !strings.Contains(text, "url: http://"+shippedAddress+"/sd") {
		t.Fatalf("%s does not discover from http://%s/sd", shippedProbeConfig, shippedAddress)
	}
	var cfg struct {
		ScrapeConfigs []map[string]any `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal([]byte(strings.ReplaceAll(text, shippedAddress, addr)), &cfg); err != nil {
		t.Fatal(err)
	}
	sds := 0
	for _, job := range cfg.ScrapeConfigs {
		job["scrape_interval"], job["scrape_timeout"] = "1s", "1s"
		if l, ok := job["http_sd_configs"].([]any); ok {
			for _, sd := range l {
				sd.(map[string]any)["refresh_interval"] = "1s"
				sds++
			}
		}
	}
	if sds != 1 {
		t.Fatalf("%s has %d http_sd_configs, want 1", shippedProbeConfig, sds)
	}
	out, err := yaml.Marshal(cfg.ScrapeConfigs)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// waitProbeTargets waits until Prometheus's targets of job indexima are
// exactly the nodes, each scraped successfully through
// /probe?target=<host:port>&module=<cluster> with its target as instance,
// and its indexima_up is 1 with the node's cluster and name.
func waitProbeTargets(t *testing.T, prom *prometheusServer, nodes []sdNode) {
	t.Helper()
	want := map[string]sdNode{}
	var wantList []string
	for _, n := range nodes {
		want[n.target] = n
		wantList = append(wantList, n.target)
	}
	sort.Strings(wantList)
	var problems []string
	eventually(t, 60*time.Second, fmt.Sprintf("Prometheus probing exactly %v", wantList), func() bool {
		problems = problems[:0]
		ts, err := prom.targets()
		if err != nil {
			problems = append(problems, err.Error())
			return false
		}
		var got []string
		for _, tg := range ts {
			if tg.ScrapePool != "indexima" {
				continue
			}
			got = append(got, tg.Labels["instance"])
			n, ok := want[tg.Labels["instance"]]
			if !ok {
				problems = append(problems, "unexpected target "+tg.Labels["instance"])
				continue
			}
			u, err := url.Parse(tg.ScrapeURL)
			if err != nil || u.Path != "/probe" || u.Query().Get("target") != n.target || u.Query().Get("module") != n.cluster {
				problems = append(problems, fmt.Sprintf("%s scraped at %s, want /probe?target=%s&module=%s", n.target, tg.ScrapeURL, n.target, n.cluster))
			}
			if tg.Health != "up" || tg.LastError != "" {
				problems = append(problems, fmt.Sprintf("%s: health %q, last error %q", n.target, tg.Health, tg.LastError))
			}
		}
		sort.Strings(got)
		if !slices.Equal(got, wantList) {
			problems = append(problems, fmt.Sprintf("targets %v", got))
		}
		if len(problems) > 0 {
			return false
		}
		// Scraped: the probes' own series, one per node, up.
		ups, err := prom.query(`indexima_up{job="indexima"} == 1`)
		if err != nil {
			problems = append(problems, err.Error())
			return false
		}
		seen := map[string]bool{}
		for _, s := range ups {
			n, ok := want[s.Metric["instance"]]
			if ok && s.Metric["cluster"] == n.cluster && s.Metric["node"] == n.name {
				seen[n.target] = true
			}
		}
		if len(seen) != len(want) {
			problems = append(problems, fmt.Sprintf("indexima_up == 1 for %d of %d nodes: %v", len(seen), len(want), ups))
			return false
		}
		return true
	}, func() string { return strings.Join(problems, "; ") })
}
