package faults

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// With --events.state-file the exporter resumes where it stopped: events
// that happened while it was down (here after a crash: SIGKILL right after
// a scrape) are counted when it is back, and the counters continue from
// their saved values.
func TestRestartWithStateFile(t *testing.T) {
	for _, crash := range []bool{false, true} {
		name := "sigterm"
		if crash {
			name = "sigkill"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, rigOpts{sim: simulator.Config{Seed: 15, Rate: 2}, noStart: true})
			state := filepath.Join(r.dir, "state", "cursors.json")
			if err := os.MkdirAll(filepath.Dir(state), 0o700); err != nil {
				t.Fatal(err)
			}
			r.args = []string{"--events.state-file=" + state}
			r.start()
			r.scrape()
			before := r.run(5, 30*time.Second)
			if _, err := os.Stat(state); err != nil {
				t.Fatalf("no state file after successful polls: %v", err)
			}
			if crash {
				r.exp.kill()
			} else {
				r.exp.stop()
			}
			r.run0(20, 30*time.Second) // 10 simulated minutes with the exporter down
			r.start()
			s := r.settle()
			for _, n := range r.nodes {
				b := before.byLabel("indexima_events_total", node(n), "event")
				a := s.byLabel("indexima_events_total", node(n), "event")
				for ev, v := range b {
					if a[ev] < v {
						t.Errorf("node %s %s went down across the restart: %v -> %v", n, ev, v, a[ev])
					}
				}
			}
			tl := r.check(s)
			t.Logf("restart (%s) with state file, 10 min down: %s", name, tl)
		})
	}
}

// Without a state file the documented baseline rule holds: after a restart
// counters start at 0, nothing that happened before the restart (while the
// exporter was down included) is counted, and counting resumes exactly
// from the new first contact.
func TestRestartWithoutStateFile(t *testing.T) {
	r := newRig(t, rigOpts{sim: simulator.Config{Seed: 16, Rate: 2}})
	r.scrape()
	r.run(5, 30*time.Second)
	r.exp.stop()
	r.run0(20, 30*time.Second)
	r.start()
	r.forget()
	s := r.scrape()
	for _, n := range r.nodes {
		for ev, v := range s.byLabel("indexima_events_total", node(n), "event") {
			if v != 0 {
				t.Errorf("node %s: %s = %v at the first scrape after a restart; want 0 (no replay)", n, ev, v)
			}
		}
	}
	r.run(10, 30*time.Second)
	tl := r.check(r.settle())
	t.Logf("restart without state file: %s", tl)
}
