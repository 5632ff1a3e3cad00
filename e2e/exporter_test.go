package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

const (
	consoleUser     = "exporter"
	consolePassword = "e2e-s3cret"
)

// exporterRun is the exporter binary configured for the simulator; start
// can be called again after kill (same address, same state file).
type exporterRun struct {
	bin, dir string
	addr     string // the front's: where Prometheus scrapes, across restarts
	front    *front
	state    string   // --events.state-file; empty: run without one
	args     []string // more flags
	proc     *process
}

// newExporter writes the exporter's configuration for the simulator's nodes
// (named node1, node2, ...) and returns a run ready to start.
func newExporter(t *testing.T, bin, dir string, sim *simulator.Simulator) *exporterRun {
	t.Helper()
	pw := filepath.Join(dir, "password")
	if err := os.WriteFile(pw, []byte(consolePassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "console:\n  url: %s\n  username: %s\n  password_file: %s\n  timeout: 5s\nnodes:\n", sim.URL(), consoleUser, pw)
	for i, key := range sim.Nodes() {
		host, port, ok := strings.Cut(key, ":")
		if !ok {
			t.Fatalf("simulator node key %q is not host:port", key)
		}
		// The simulator numbers its nodes from 1 in order (NODE_DOWN
		// comments): with number, down_node names the node.
		fmt.Fprintf(&cfg, "  - host: %s\n    port: %s\n    name: node%d\n    number: %d\n", host, port, i+1, i+1)
	}
	if err := os.WriteFile(filepath.Join(dir, "indexima.yml"), []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFront(t)
	return &exporterRun{bin: bin, dir: dir, addr: f.addr, front: f, state: filepath.Join(dir, "cursors.json")}
}

func (e *exporterRun) start(t *testing.T) {
	t.Helper()
	args := []string{
		"--config.file=" + filepath.Join(e.dir, "indexima.yml"),
		"--web.listen-address=127.0.0.1:0",
		"--log.level=debug",
	}
	if e.state != "" {
		args = append(args, "--events.state-file="+e.state)
	}
	args = append(args, e.args...)
	e.proc = startProcess(t, "indexima_exporter", e.bin, args...)
	own := e.proc.listening(t, 30*time.Second)
	waitReady(t, e.proc, "http://"+own+"/-/ready", 30*time.Second)
	e.front.setBackend(own)
}

// kill ends the exporter with SIGKILL (a crash: nothing is flushed); the
// front resets connections until the next start.
func (e *exporterRun) kill(t *testing.T) {
	t.Helper()
	e.front.setBackend("")
	e.proc.kill(t)
}
