package program

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// Issue "One slow node never blanks the cluster": with the scrape timeout
// Prometheus announces at 2, 5 and 10 s, a hanging node, a node just too
// slow for the deadline and one just fast enough, the scrape answers by the
// deadline (plus a margin for encoding and a loaded machine), the other
// nodes are up and exact, and the slow ones are exact once they recover. A
// node that keeps missing the deadline then gets a short budget, so the
// scrapes stop lasting the whole deadline.
func TestScrapeDeadline(t *testing.T) {
	clock := simulator.NewManualClock(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	sim := simulator.New(simulator.Config{Clock: clock, Seed: 4, Rate: 1, Users: map[string]string{"monitor": "pw"},
		Nodes: []simulator.NodeConfig{{Host: "healthy"}, {Host: "hanging"}, {Host: "too-slow"}, {Host: "slow"}}})
	if err := sim.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	dir := t.TempDir()
	writeFile(t, dir, "password", "pw\n")
	writeFile(t, dir, "indexima.yml", "console: {url: '"+sim.URL()+"', username: monitor, password_file: password, timeout: 60s}\n"+
		"nodes: [{host: healthy, name: healthy}, {host: hanging, name: hanging}, {host: too-slow, name: too-slow}, {host: slow, name: slow}]\n")
	r := start(t, "--config.file="+filepath.Join(dir, "indexima.yml"))

	base := map[string]int64{}
	scrape := func(header float64) (map[string]*dto.MetricFamily, time.Duration) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, r.base+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		if header > 0 {
			req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", fmt.Sprint(header))
		}
		begin := time.Now()
		resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		took := time.Since(begin)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("scrape: %d %v", resp.StatusCode, err)
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		mfs, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		return mfs, took
	}
	nodeValue := func(mfs map[string]*dto.MetricFamily, name, node string) (float64, bool) {
		for _, m := range mfs[name].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "node" && l.GetValue() == node {
					return m.GetGauge().GetValue() + m.GetCounter().GetValue(), true
				}
			}
		}
		return 0, false
	}
	// exact checks a node's counters against the simulator's truth.
	exact := func(mfs map[string]*dto.MetricFamily, node string) {
		t.Helper()
		key := node + ":9999"
		want := 0
		for _, e := range sim.Truth(key) {
			if e.CompletedAt > base[node] && e.CompletedAt <= clock.Now().UnixMilli() {
				want++
			}
		}
		got := 0.0
		for _, m := range mfs["indexima_events_total"].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "node" && l.GetValue() == node {
					got += m.GetCounter().GetValue()
				}
			}
		}
		if int(got) != want {
			t.Errorf("node %s: %v events counted, want %d", node, got, want)
		}
	}
	mfs, _ := scrape(0) // first contact of every node, no fault yet
	for _, n := range []string{"healthy", "hanging", "too-slow", "slow"} {
		if up, _ := nodeValue(mfs, "indexima_up", n); up != 1 {
			t.Fatalf("node %s down at first contact", n)
		}
		base[n] = clock.Now().UnixMilli()
	}

	for _, header := range []float64{2, 5, 10} {
		budget := time.Duration(header*float64(time.Second)) - 500*time.Millisecond
		// A poll is two calls: the slow node answers each in 35 % of the
		// budget, the too slow one in 60 %.
		sim.SetNodeFault("hanging:9999", simulator.Fault{Hang: true})
		sim.SetNodeFault("too-slow:9999", simulator.Fault{Latency: budget * 60 / 100})
		sim.SetNodeFault("slow:9999", simulator.Fault{Latency: budget * 35 / 100})
		clock.Advance(30 * time.Second)
		mfs, took := scrape(header)
		if took > budget+1500*time.Millisecond {
			t.Errorf("header %vs: the scrape took %v, past its deadline %v (+1.5 s)", header, took, budget)
		}
		for node, want := range map[string]float64{"healthy": 1, "hanging": 0, "too-slow": 0, "slow": 1} {
			if up, _ := nodeValue(mfs, "indexima_up", node); up != want {
				t.Errorf("header %vs: up{%s} = %v, want %v", header, node, up, want)
			}
		}
		if v, _ := nodeValue(mfs, "indexima_console_up", ""); len(mfs["indexima_console_up"].GetMetric()) != 1 || mfs["indexima_console_up"].GetMetric()[0].GetGauge().GetValue() != 1 {
			t.Errorf("header %vs: console_up %v while only nodes are slow", header, v)
		}
		exact(mfs, "healthy")
		exact(mfs, "slow")
		if got := failures(mfs, "hanging", "deadline"); got < 1 {
			t.Errorf("header %vs: no deadline failure counted for the hanging node", header)
		}
		// The faults clear: every node catches up, exactly.
		sim.ClearFaults()
		clock.Advance(10 * time.Second)
		mfs, _ = scrape(header)
		for _, n := range []string{"healthy", "hanging", "too-slow", "slow"} {
			if up, _ := nodeValue(mfs, "indexima_up", n); up != 1 {
				t.Errorf("header %vs: node %s still down after it recovered", header, n)
			}
			exact(mfs, n)
		}
	}

	// A node that keeps hanging: after three misses it gets a quarter of the
	// budget, and the scrapes no longer last the whole deadline.
	sim.SetNodeFault("hanging:9999", simulator.Fault{Hang: true})
	budget := 4500 * time.Millisecond
	var took time.Duration
	for i := 0; i < 4; i++ {
		clock.Advance(10 * time.Second)
		mfs, took = scrape(5)
	}
	if took > budget/2 {
		t.Errorf("a node that kept hanging still made the scrape last %v (budget %v)", took, budget)
	}
	exact(mfs, "healthy")
	sim.ClearFaults()
	clock.Advance(10 * time.Second)
	mfs, _ = scrape(5)
	if up, _ := nodeValue(mfs, "indexima_up", "hanging"); up != 1 {
		t.Errorf("the hanging node did not come back with its short budget")
	}
	exact(mfs, "hanging")
}

func failures(mfs map[string]*dto.MetricFamily, node, reason string) float64 {
	for _, m := range mfs["indexima_exporter_node_poll_failures_total"].GetMetric() {
		var n, r string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "node":
				n = l.GetValue()
			case "reason":
				r = l.GetValue()
			}
		}
		if n == node && r == reason {
			return m.GetCounter().GetValue()
		}
	}
	return 0
}
