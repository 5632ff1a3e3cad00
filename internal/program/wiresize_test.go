package program

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// The gzip answer of /metrics for 200 simulated nodes, in each text format
// Prometheus asks for, is at most 1.5 times the size of `gzip -1` of the
// same text: what the exporter saves on CPU does not cost the network.
func TestGzipAnswerIsNotLargerThanGzipFast(t *testing.T) {
	gzipBin, err := exec.LookPath("gzip")
	if err != nil {
		t.Fatalf("gzip, which every Debian has, is missing: %v", err)
	}
	const nodes = 200
	clock := simulator.NewManualClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	var ncs []simulator.NodeConfig
	for i := range nodes {
		ncs = append(ncs, simulator.NodeConfig{Host: fmt.Sprintf("indexima-core-%d", i+1), Port: 9999})
	}
	sim := simulator.New(simulator.Config{Users: map[string]string{"monitor": "secret"}, Nodes: ncs, Clock: clock, Seed: 7, Rate: 0.05})
	if err := sim.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "console: {url: %q, username: monitor, password: secret}\nnodes:\n", sim.URL())
	for _, n := range ncs {
		fmt.Fprintf(&cfg, "  - {host: %s, port: %d}\n", n.Host, n.Port)
	}
	dir := t.TempDir()
	r := start(t, "--config.file="+writeFile(t, dir, "indexima.yml", cfg.String()))
	// First contact, then an hour of events (a busy node's day has more
	// series: every type seen, tables and hyperindexes).
	r.get("/metrics")
	for range 6 {
		clock.Advance(10 * time.Minute)
		r.get("/metrics")
	}

	for _, accept := range []string{"", acceptOpenMetrics1, acceptPrometheus3} {
		// Both answers must hold the same series, so no node may miss the
		// scrape's deadline in one of them: a long scrape timeout, as
		// Prometheus announces it, keeps a slow (-race, loaded) machine
		// from making a node down in one scrape and not in the other.
		_, plainBody := testkit.Do(t, timedRequest(t, r.base+"/metrics", accept, "identity"))
		plain := string(plainBody)
		resp, compressed := testkit.Do(t, gzipRequest(t, r.base+"/metrics", accept))
		if resp.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("Accept %q: not compressed", accept)
		}
		text := testkit.Gunzip(t, compressed)
		if n := strings.Count(text, "indexima_events_total{"); n < nodes*10 {
			t.Fatalf("Accept %q: %d event counters for %d nodes", accept, n, nodes)
		}
		if strings.Count(text, "\n") != strings.Count(plain, "\n") {
			t.Errorf("Accept %q: the gzip answer has %d lines, the plain one %d", accept, strings.Count(text, "\n"), strings.Count(plain, "\n"))
		}
		path := filepath.Join(dir, "exposition.txt")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		fast, err := exec.Command(gzipBin, "-1", "-c", path).Output()
		if err != nil {
			t.Fatal(err)
		}
		ratio := float64(len(compressed)) / float64(len(fast))
		t.Logf("Accept %q: %d bytes of text, %d gzip answer, %d gzip -1: %.2f x", accept, len(text), len(compressed), len(fast), ratio)
		if ratio > 1.5 {
			t.Errorf("Accept %q: the gzip answer is %.2f x gzip -1 of the same text (%d against %d bytes), want at most 1.5", accept, ratio, len(compressed), len(fast))
		}
	}
}

func gzipRequest(t *testing.T, url, accept string) *http.Request {
	t.Helper()
	return timedRequest(t, url, accept, "gzip")
}

// timedRequest is a scrape announcing a timeout of five minutes, which no
// node's poll reaches however slow the machine.
func timedRequest(t *testing.T, url, accept, encoding string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, bytes.NewReader(nil))
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	req.Header.Set("Accept-Encoding", encoding)
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "300")
	return req
}
