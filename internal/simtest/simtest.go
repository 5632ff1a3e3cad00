// Package simtest starts the simulated console for the in-process tests of
// the poller and the collector. It is apart from internal/testkit because
// the simulator's own tests import testkit: testkit may not import the
// simulator.
package simtest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// Start starts a simulator on 127.0.0.1 with a manual clock at start, closed
// at the end of the test. cfg's Users default to exporter/s3cret and its
// Nodes to node1.test … nodeN.test.
func Start(t *testing.T, start time.Time, cfg simulator.Config, nodes int) (*simulator.Simulator, *simulator.ManualClock) {
	t.Helper()
	clock := simulator.NewManualClock(start)
	cfg.Clock = clock
	if cfg.Users == nil {
		cfg.Users = map[string]string{"exporter": "s3cret"}
	}
	if cfg.Nodes == nil {
		for i := 0; i < nodes; i++ {
			cfg.Nodes = append(cfg.Nodes, simulator.NodeConfig{Host: fmt.Sprintf("node%d.test", i+1)})
		}
	}
	sim := simulator.New(cfg)
	if err := sim.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	return sim, clock
}

// Logger is a logfmt logger writing to the test's log.
func Logger(t *testing.T) log.Logger { return log.NewLogfmtLogger(testWriter{t}) }

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
