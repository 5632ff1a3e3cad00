package harness

import (
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/internal/testca"
)

// Credentials of the simulated console. Not secrets: the console listens on
// loopback and holds invented events only.
const (
	harnessUser     = "harness"
	harnessPassword = "harness-password"
	// staticToken is what json_exporter sends: it cannot log in.
	staticToken = "harness-static-token-for-json-exporter"
)

// start of the simulated clock: a fixed day, so runs are reproducible.
var clockStart = time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)

// cluster is a simulated console with n nodes on loopback.
type cluster struct {
	sim   *simulator.Simulator
	clock *simulator.ManualClock
	nodes []simulator.NodeConfig
	// caFile is the private CA of a console served over HTTPS, in tlsDir
	// (removed with the cluster); empty for plain HTTP.
	caFile, tlsDir string
}

func nodeHost(i int) string { return fmt.Sprintf("node-%03d", i) }

// console is how the simulated console behaves where the specification
// leaves a choice (a simulator profile, and whether event/count counts
// running events), and how it is served.
type console struct {
	profile      string // "" is the simulator's default
	countRunning bool
	// tls, when set, serves the console over HTTPS offering these
	// protocols in ALPN ("h2", "http/1.1"), with a certificate of a
	// private CA that the exporter is given as its tls_config.ca_file.
	tls []string
}

func startCluster(n int, rate float64, seed int64, con console) (*cluster, error) {
	var caFile, tlsDir string
	c, err := startClusterWith(n, rate, seed, clockStart, func(cfg *simulator.Config) error {
		cfg.Readings = simulator.Readings{CountRunning: con.countRunning}
		if len(con.tls) > 0 {
			var err error
			if cfg.TLS, caFile, tlsDir, err = consoleTLS(con.tls); err != nil {
				return err
			}
		}
		if con.profile != "" {
			return cfg.ApplyProfile(con.profile)
		}
		return nil
	})
	if err != nil {
		if tlsDir != "" {
			os.RemoveAll(tlsDir)
		}
		return nil, err
	}
	c.caFile, c.tlsDir = caFile, tlsDir
	return c, nil
}

// consoleTLS makes a private CA in a new temporary directory, and the
// console's TLS configuration: a certificate of that CA for 127.0.0.1,
// offering protos in ALPN.
func consoleTLS(protos []string) (cfg *tls.Config, caFile, dir string, err error) {
	if dir, err = os.MkdirTemp("", "loadharness-tls-"); err != nil {
		return nil, "", "", err
	}
	ca, err := testca.New(dir, "console")
	if err == nil {
		var is testca.Issued
		if is, err = ca.Issue(dir, "console", "127.0.0.1"); err == nil {
			return &tls.Config{Certificates: []tls.Certificate{is.Pair}, NextProtos: protos}, ca.File, dir, nil
		}
	}
	os.RemoveAll(dir)
	return nil, "", "", fmt.Errorf("the console's certificate: %w", err)
}

// startClusterWith starts n nodes, the simulated clock standing at start,
// whose console is set by tweak (readings, node clock offsets) before the
// simulator is built.
func startClusterWith(n int, rate float64, seed int64, start time.Time, tweak func(*simulator.Config) error) (*cluster, error) {
	c := &cluster{clock: simulator.NewManualClock(start)}
	for i := range n {
		c.nodes = append(c.nodes, simulator.NodeConfig{Host: nodeHost(i), Port: 9999})
	}
	cfg := simulator.Config{
		Users:        map[string]string{harnessUser: harnessPassword},
		StaticTokens: []string{staticToken},
		Nodes:        c.nodes,
		Clock:        c.clock,
		Seed:         seed,
		Rate:         rate,
	}
	if tweak != nil {
		if err := tweak(&cfg); err != nil {
			return nil, err
		}
		c.nodes = cfg.Nodes
	}
	c.sim = simulator.New(cfg)
	if err := c.sim.Start("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("simulator: %w", err)
	}
	return c, nil
}

func (c *cluster) close() {
	_ = c.sim.Close()
	if c.tlsDir != "" {
		os.RemoveAll(c.tlsDir)
	}
}

// setLatency makes every node answer d late (0: clears).
func (c *cluster) setLatency(d time.Duration) {
	for _, n := range c.nodes {
		c.sim.SetNodeFault(n.Key(), simulator.Fault{Latency: d})
	}
}

// writeExporterConfig writes the exporter's configuration for the cluster
// into dir and returns its path.
func (c *cluster) writeExporterConfig(dir string) (string, error) {
	pw := filepath.Join(dir, "password")
	if err := os.WriteFile(pw, []byte(harnessPassword+"\n"), 0o600); err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "console:\n  url: %s\n  username: %s\n  password_file: %s\n  timeout: 30s\n",
		c.sim.URL(), harnessUser, pw)
	if c.caFile != "" {
		fmt.Fprintf(&b, "  tls_config:\n    ca_file: %s\n", c.caFile)
	}
	b.WriteString("nodes:\n")
	for _, n := range c.nodes {
		fmt.Fprintf(&b, "  - {host: %s, port: %d}\n", n.Host, n.Port)
	}
	path := filepath.Join(dir, "indexima.yml")
	return path, os.WriteFile(path, []byte(b.String()), 0o600)
}
