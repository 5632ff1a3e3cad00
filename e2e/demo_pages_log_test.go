package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/indexima-exporter/indexima_exporter/config"
	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// TestDemoIncidentLogIsRead: what TestDemoPagesPerIncident reports of the
// demo's incidents is read from the log lines the lively scenario really
// writes (logfmt with a ts, as the exporter logs): half an hour of its
// incidents on a manual clock, every one found, dated, and counted under a
// kind and node the measurement's report names.
func TestDemoIncidentLogIsRead(t *testing.T) {
	var nodes []simulator.NodeConfig
	for _, h := range []string{"core-1", "core-2", "core-3", "core-4"} {
		nodes = append(nodes, simulator.NodeConfig{Host: h, Port: config.DefaultNodePort})
	}
	clock := simulator.NewManualClock(time.Now())
	sim := simulator.New(simulator.Config{Nodes: nodes, Clock: clock, Seed: 1})
	var out testkit.SyncBuffer
	logger := log.With(log.NewLogfmtLogger(&out), "ts", log.DefaultTimestampUTC)
	start := time.Now().Add(-time.Second)
	lively := simulator.NewLively(sim, simulator.LivelyConfig{Clock: clock, Seed: 1, Every: 10 * time.Second, Logger: logger})
	for range 30 * 60 {
		clock.Advance(time.Second)
		lively.Step(clock.Now())
	}
	logged := strings.Count(out.String(), `msg="lively incident"`)

	counts := demoIncidentKinds(out.String())
	kind := regexp.MustCompile(`^((node-down|memory-low|reload) core-[1-4]|cluster-(stop|start))$`)
	total, seen := 0, map[string]bool{}
	for k, n := range counts {
		total += n
		if !kind.MatchString(k) {
			t.Errorf("%d incidents counted as %q, no kind of the scenario", n, k)
		}
		seen[strings.Fields(k)[0]] = true
	}
	if total != logged || logged < 100 {
		t.Errorf("counted %d incidents of the %d logged (want all, and half an hour of them)", total, logged)
	}
	for _, k := range []string{"node-down", "memory-low", "reload", "cluster-stop", "cluster-start"} {
		if !seen[k] {
			t.Errorf("no %s incident counted in half an hour: %v", k, counts)
		}
	}

	listed := strings.Split(strings.TrimSuffix(demoIncidents(out.String(), start), "\n"), "\n")
	if len(listed) != logged {
		t.Errorf("listed %d incidents of the %d logged", len(listed), logged)
	}
	for _, l := range listed {
		if strings.HasPrefix(strings.TrimSpace(l), "?") {
			t.Errorf("incident without its time: %s", l)
		}
	}
}
