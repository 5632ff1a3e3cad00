package faults

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// One process per state file. A second exporter on the state file of a
// running one (a second instance started by hand with the same
// configuration, or a shard configured with some of the nodes) exits 1
// with one line naming the path and the holder, before it reads or writes
// anything: the state of the nodes it does not configure stays in the
// manifest, and the slot file the first writes stays in place. After a
// crash of the first (SIGKILL), the kernel has released the lock: a new
// exporter starts at once and continues the counts exactly, the events of
// the downtime included.
func TestOneProcessPerStateFile(t *testing.T) {
	for _, shard := range []bool{false, true} {
		name := "same configuration"
		if shard {
			name = "shard of two nodes"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, rigOpts{sim: simulator.Config{Seed: 38, Rate: 2}, noStart: true})
			state := filepath.Join(r.dir, "state", "cursors.json")
			if err := os.MkdirAll(filepath.Dir(state), 0o700); err != nil {
				t.Fatal(err)
			}
			r.args = []string{"--events.state-file=" + state}
			first := r.start()
			r.scrape()
			r.run(5, 30*time.Second)

			cfg := r.cfgPath
			if shard {
				cfg = filepath.Join(r.dir, "shard.yml")
				r.writeFile(cfg, r.configYAML(r.nodes[:2]))
			}
			code, stderr := runUntilExit(t, "--config.file="+cfg, "--events.state-file="+state, "--web.listen-address=127.0.0.1:0")
			host, _ := os.Hostname()
			want := fmt.Sprintf("indexima_exporter: --events.state-file: state file %q is in use by another process, pid %d on host %s, "+
				"which holds the lock on %q: one process per state file; stop that process, or give this one a state file of its own\n",
				state, first.Pid(), host, state+".lock")
			if code != 1 || stderr != want {
				t.Fatalf("second exporter: status %d, stderr\n %q\nwant 1 and one line\n %q", code, stderr, want)
			}

			r.run(5, 30*time.Second) // the first goes on
			var m struct {
				SlotFile string                     `json:"slot_file"`
				Nodes    map[string]json.RawMessage `json:"nodes"`
			}
			b, err := os.ReadFile(state)
			if err == nil {
				err = json.Unmarshal(b, &m)
			}
			if err != nil || len(m.Nodes) != len(r.nodes) {
				t.Fatalf("manifest after the refusal: %v, %d nodes, want %d:\n%s", err, len(m.Nodes), len(r.nodes), b)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(state), m.SlotFile)); err != nil {
				t.Fatalf("the slot file the first exporter writes: %v", err)
			}

			first.kill()
			r.run0(20, 30*time.Second) // 10 simulated minutes down
			r.start()                  // at once: no stale lock to wait out
			tl := r.check(r.settle())
			t.Logf("second exporter refused (%s), then SIGKILL and restart: %s", name, tl)
		})
	}
}
