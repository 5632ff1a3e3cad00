// Package demo runs a simulated cluster inside the exporter (--demo): a
// console with four nodes on loopback, a scripted opening that shows every
// kind of event within a minute, then the simulator's lively scenario with
// an incident every few seconds. It exists so a newcomer sees metrics move
// without a cluster; tests use the simulator directly.
//
// The console runs on the real clock: what the demo shows is Prometheus's
// time too, so no event date, cursor or listing's last is ever after it,
// and every age computed from the series (time() - ..._timestamp_seconds,
// the dashboards' panels, /status) is positive. The demo is lively because
// its incidents come often, not because its time runs fast.
package demo

import (
	"context"
	"fmt"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/indexima-exporter/indexima_exporter/config"
	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

const (
	// Nodes is the number of simulated nodes, named core-1 to core-N.
	Nodes = 4
	// every is the mean time between two incidents of the lively scenario
	// after the opening (5 to 15 s).
	every = 10 * time.Second
	// rate is the background events per node and second: one every ~10 s.
	rate = 0.1
	// The demo console's only user. Not a secret: the console listens on
	// loopback and holds nothing but invented events.
	user     = "demo"
	password = "demo"
)

// step is one incident of the scripted opening, after the previous one.
type step struct {
	after time.Duration // real time
	name  string
	do    func(*simulator.Simulator)
}

// opening makes sure that within the first minute every kind of change is
// seen at least once, whatever the lively scenario's dice say.
var opening = []step{
	{3 * time.Second, "core-2 and core-3 report core-4 down", func(s *simulator.Simulator) {
		s.ReportNodeDown(nodeKey(2), nodeKey(4))
		s.ReportNodeDown(nodeKey(3), nodeKey(4))
	}},
	{5 * time.Second, "memory low on core-1, hyperindexes unloaded", func(s *simulator.Simulator) { s.MemoryLowEpisode(nodeKey(1)) }},
	{7 * time.Second, "cluster stop", func(s *simulator.Simulator) { s.StopCluster() }},
	// Stopped long enough for a 15s scrape interval to see it.
	{20 * time.Second, "cluster start: tables and hyperindexes load", func(s *simulator.Simulator) { s.StartCluster() }},
	{8 * time.Second, "memory low on core-3", func(s *simulator.Simulator) { s.MemoryLowEpisode(nodeKey(3)) }},
}

// Demo is a running simulated cluster.
type Demo struct {
	sim    *simulator.Simulator
	logger log.Logger
	cancel context.CancelFunc
	done   chan struct{}
	// pace multiplies every wait of the scenario (the opening's, and the
	// lively scenario's between incidents and before their follow-ups); 1,
	// tests shorten it. It never touches the clock.
	pace float64
}

func nodeName(i int) string { return fmt.Sprintf("core-%d", i) }
func nodeKey(i int) string {
	return simulator.NodeConfig{Host: nodeName(i), Port: config.DefaultNodePort}.Key()
}

// Start starts the simulated console on 127.0.0.1 (a free port), on the
// real clock. The scenario starts with Play.
func Start(logger log.Logger) (*Demo, error) {
	nodes := make([]simulator.NodeConfig, Nodes)
	for i := range nodes {
		nodes[i] = simulator.NodeConfig{Host: nodeName(i + 1), Port: config.DefaultNodePort}
	}
	sim := simulator.New(simulator.Config{
		Users: map[string]string{user: password},
		Nodes: nodes,
		// No Clock: the real one.
		Seed: time.Now().UnixNano(),
		Rate: rate,
	})
	if err := sim.Start("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("demo: starting the simulated console: %w", err)
	}
	level.Info(logger).Log("msg", "demo: simulated console listening", "url", sim.URL(),
		"nodes", Nodes, "clock", "real time", "incident_every", every, "user", user)
	return &Demo{sim: sim, logger: logger, done: make(chan struct{}), pace: 1}, nil
}

// Config is the exporter configuration pointing at the simulated console.
func (d *Demo) Config() *config.Config {
	c := config.Cluster{Console: config.Console{
		URL: d.sim.URL(), Username: user, Password: password,
		PasswordSource: "demo", Timeout: 5 * time.Second,
	}}
	for i := 1; i <= Nodes; i++ {
		// The simulator numbers its nodes from 1, in order (NODE_DOWN
		// comments): down_node then names the node, core-4 rather than 4.
		number := i
		c.Nodes = append(c.Nodes, config.Node{Host: nodeName(i), Port: config.DefaultNodePort, Name: nodeName(i), Number: &number})
	}
	return &config.Config{Clusters: []config.Cluster{c}}
}

// Play starts the scripted opening, then the lively scenario, in the
// background until Close. Call it after the exporter's first contact with
// the nodes, so the opening's events are counted.
func (d *Demo) Play() {
	ctx, cancel := context.WithCancel(context.Background())
	d.cancel = cancel
	go func() {
		defer close(d.done)
		for _, s := range opening {
			t := time.NewTimer(time.Duration(float64(s.after) * d.pace))
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			level.Info(d.logger).Log("msg", "demo: incident", "incident", s.name)
			s.do(d.sim)
		}
		simulator.NewLively(d.sim, simulator.LivelyConfig{
			Seed: time.Now().UnixNano(), Every: every, Pace: d.pace, Logger: d.logger,
		}).Run(ctx)
	}()
}

// Close stops the scenario and the simulated console.
func (d *Demo) Close() error {
	if d.cancel != nil {
		d.cancel()
		<-d.done
	}
	return d.sim.Close()
}
