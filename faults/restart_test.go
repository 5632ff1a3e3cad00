package faults

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// A state file edited by hand or damaged: a value that cannot be trusted
// (here a null histogram, a label too long, a pending event with no count)
// is dropped, the rest is restored, and counting goes on exactly from the
// saved cursor and counters. A file that is not a state at all is set aside
// and the nodes take fresh baselines; the exporter runs either way.
func TestDamagedStateFile(t *testing.T) {
	r := newRig(t, rigOpts{nodes: 2, sim: simulator.Config{Seed: 23, Rate: 2}, noStart: true})
	state := filepath.Join(r.dir, "cursors.json")
	r.args = []string{"--events.state-file=" + state}
	n := r.nodes[0]
	r.advance(time.Minute)
	cursor := r.now(n)
	saved := fmt.Sprintf(`{"version":1,"nodes":{"/%s":{"contacted":true,"cursor":%d,
		"events":{"TABLE_LOADED":5,"x y":3},"durations":{"TABLE_LOADED":null,"SAVE_METADATA":{"buckets":[1],"count":1,"sum":0.5}},
		"tables":{%q:1},"pending":{"k":{"type":"TABLE_LOADED","date":1,"n":0}}}}}`, n, cursor, strings.Repeat("t", 300))
	r.writeFile(state, saved)
	r.advance(5 * time.Minute)
	r.start()
	r.baseline[n] = cursor // restored: counting resumed from the saved cursor
	s := r.scrape()
	if up, _ := s.value("indexima_up", node(n)); up != 1 {
		t.Fatalf("restored node is down")
	}
	got, _ := s.value("indexima_events_total", map[string]string{"node": n, "event": "TABLE_LOADED"})
	if got < 5 {
		t.Fatalf("TABLE_LOADED = %v: the saved counter (5) was not restored", got)
	}
	r.run(5, 30*time.Second)
	s = r.settle()
	// The hand-made state holds no running events: events that started
	// before its cursor are not the exporter's to find. Those that started
	// since are all counted, on top of the saved count.
	want := map[string]float64{"TABLE_LOADED": 5}
	for _, ev := range r.sim.Truth(n) {
		if ev.Date >= cursor && ev.CompletedAt <= r.high[n] {
			want[ev.Type]++
		}
	}
	gotAll := s.byLabel("indexima_events_total", node(n), "event")
	var sumWant, sumGot float64
	for ev, w := range want {
		sumWant, sumGot = sumWant+w, sumGot+gotAll[ev]
		if gotAll[ev] != w {
			t.Errorf("node %s %s = %v, want %v (saved counters plus the truth since the saved cursor)", n, ev, gotAll[ev], w)
		}
	}
	t.Logf("damaged state restored: node %s expected %v, counted %v", n, sumWant, sumGot)
	r.checkNode(s, r.nodes[1])

	// Not a state at all: set aside, fresh baselines.
	r.exp.stop()
	r.writeFile(state, "this is not json")
	r.start()
	r.forget()
	r.scrape()
	if _, err := os.Stat(state + ".unreadable"); err != nil {
		t.Errorf("unusable state file not set aside: %v", err)
	}
	r.run(3, 30*time.Second)
	r.check(r.settle())
}

// A state whose cursor stands ahead of the console's clock, with no event
// behind it (written when the cursor could come from a `last` ahead of any
// clock, or edited): left alone, its window would stand ahead of every
// event the node logs and nothing would be counted again, silently. The
// exporter repairs it at the first poll: first contact taken again, the
// saved counters kept, the repair counted in
// indexima_exporter_cursor_repairs_total, and every event completed since
// counted.
func TestCursorAheadOfTheConsoleRepaired(t *testing.T) {
	r := newRig(t, rigOpts{nodes: 1, sim: simulator.Config{Seed: 29, Rate: 2}, noStart: true})
	state := filepath.Join(r.dir, "cursors.json")
	r.args = []string{"--events.state-file=" + state}
	n := r.nodes[0]
	r.advance(time.Minute)
	ahead := r.now(n) + 2*24*time.Hour.Milliseconds()
	r.writeFile(state, fmt.Sprintf(`{"version":1,"nodes":{"/%s":{"contacted":true,"cursor":%d,"floor":%d,
		"events":{"TABLE_LOADED":5}}}}`, n, ahead, ahead-time.Hour.Milliseconds()))
	r.start()
	contact := r.now(n)
	r.baseline[n] = contact
	s := r.scrape()
	if up, _ := s.value("indexima_up", node(n)); up != 1 {
		t.Fatalf("node is down after the repair")
	}
	if got, _ := s.value("indexima_exporter_cursor_repairs_total", node(n)); got != 1 {
		t.Fatalf("indexima_exporter_cursor_repairs_total = %v, want 1", got)
	}
	if cur, _ := s.value("indexima_events_cursor_timestamp_seconds", node(n)); int64(cur*1000) > r.now(n)+time.Minute.Milliseconds() {
		t.Fatalf("cursor %v still ahead of the node's clock %d after the repair", cur, r.now(n))
	}
	r.run(10, 30*time.Second)
	s = r.settle()
	want := map[string]float64{"TABLE_LOADED": 5}
	for _, ev := range r.sim.Truth(n) {
		if ev.CompletedAt > contact && ev.CompletedAt <= r.high[n] && !ev.Aborted {
			want[ev.Type]++
		}
	}
	got := s.byLabel("indexima_events_total", node(n), "event")
	var sumWant, sumGot float64
	for ev, w := range want {
		sumWant, sumGot = sumWant+w, sumGot+got[ev]
		if got[ev] != w {
			t.Errorf("node %s %s = %v, want %v (saved counter plus every event completed since the repair)", n, ev, got[ev], w)
		}
	}
	if sumWant <= 5 {
		t.Fatalf("no event completed after the repair: the test shows nothing")
	}
	if got, _ := s.value("indexima_exporter_cursor_repairs_total", node(n)); got != 1 {
		t.Errorf("indexima_exporter_cursor_repairs_total = %v after the repair, want 1 (repaired once)", got)
	}
	t.Logf("cursor 2 days ahead repaired: expected %v, counted %v", sumWant, sumGot)
}
