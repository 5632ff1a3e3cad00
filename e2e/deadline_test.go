package e2e

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

// Issue "One slow node never blanks the cluster", with a real Prometheus
// that scrapes every 4 s with a 3 s timeout: one node hangs, yet the
// scrapes succeed (the target stays up; a machine starved by other tests
// may miss one) and record the healthy nodes, and
// the hanging node is down, with the reason counted. On both Prometheus
// lines: each announces its timeout (X-Prometheus-Scrape-Timeout-Seconds).
func TestOneHangingNodeDoesNotBlankTheCluster(t *testing.T) {
	for _, line := range testkit.PrometheusLines {
		t.Run("prometheus-"+line.Name, func(t *testing.T) { hangingNode(t, line) })
	}
}

func hangingNode(t *testing.T, line testkit.PrometheusLine) {
	promBin := line.Prometheus(t)
	dir := t.TempDir()
	bin := testkit.ExporterBinary(t)
	sim := simulator.New(simulator.Config{Users: map[string]string{consoleUser: consolePassword}, Rate: 0.5,
		Nodes: []simulator.NodeConfig{{Host: "node1.test"}, {Host: "node2.test"}, {Host: "node3.test"}, {Host: "node4.test"}}})
	if err := sim.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	exp := newExporter(t, bin, dir, sim)
	// A console timeout longer than the scrape's: only the scrape's
	// deadline can save the scrape.
	cfgFile := filepath.Join(dir, "indexima.yml")
	cfg, err := os.ReadFile(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfgFile, []byte(strings.Replace(string(cfg), "timeout: 5s", "timeout: 30s", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	exp.start(t)

	job := fmt.Sprintf("  - job_name: indexima\n    scrape_interval: 4s\n    scrape_timeout: 3s\n    static_configs:\n      - targets: [%q]\n", exp.addr)
	prom := startPrometheus(t, promBin, dir, nil, job)
	waitQuery(t, prom, `count(indexima_up == 1) == 4`, 30*time.Second)

	sim.SetNodeFault(sim.Nodes()[3], simulator.Fault{Hang: true})
	hangAt := time.Now()
	waitQuery(t, prom, `indexima_up{node="node4"} == 0`, 30*time.Second)
	// Six scrapes with the node hanging.
	window := ""
	eventually(t, 90*time.Second, "six scrapes with node4 hanging", func() bool {
		window = fmt.Sprintf("[%ds]", int(time.Since(hangAt).Seconds()))
		s, err := prom.query(`count_over_time(up{job="indexima"}` + window + `)`)
		return err == nil && len(s) == 1 && sampleValue(t, s[0]) >= 6
	}, func() string { return "fewer than six scrapes recorded" })
	for _, q := range []struct{ expr, what string }{
		// A scrape the hang spoiled would spoil every one of them (each
		// would wait for the 30 s console timeout): all but at most one
		// must succeed, since a machine starved by other tests may miss
		// the 0.5 s between the exporter's deadline and Prometheus' once.
		{`sum_over_time(up{job="indexima"}` + window + `) >= count_over_time(up{job="indexima"}` + window + `) - 1`, "the scrapes of the target succeeded"},
		{`min_over_time(scrape_duration_seconds{job="indexima"}` + window + `) < 3`, "every scrape ended within its timeout"},
		{`count(min_over_time(indexima_up{node=~"node[123]"}` + window + `) == 1) == 3`, "the healthy nodes were up at every scrape"},
		{`count_over_time(indexima_up{node="node1"}` + window + `) == on () sum_over_time(up{job="indexima"}` + window + `)`, "node1 recorded at every successful scrape"},
		{`max_over_time(indexima_up{node="node4"}` + window + `) == 0`, "the hanging node down"},
		{`indexima_exporter_node_poll_failures_total{node="node4", reason="deadline"} > 0`, "its deadline misses counted"},
	} {
		if s, err := prom.query(q.expr); err != nil || len(s) == 0 {
			t.Errorf("%s: %s gives nothing (%v)", q.what, q.expr, err)
		}
	}
	// The node comes back: up again, and its events counted exactly once
	// (reported equals counted).
	sim.ClearFaults()
	waitQuery(t, prom, `indexima_up{node="node4"} == 1`, 30*time.Second)
	waitQuery(t, prom, `indexima_events_reported_total{node="node4"} - on (node) sum by (node) (indexima_events_total{node="node4"}) == 0`, 30*time.Second)
	prom.checkScrapesClean(t)
}
