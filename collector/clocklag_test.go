package collector

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// lagPrecision is how close to the truth the lag gauge reads whenever it
// is shown (docs/counting.md), and lagTolerance how close it reads once a
// few events have narrowed its bracket: the Date header's second, and what
// the brackets leave.
const (
	lagPrecision = 5.0
	lagTolerance = 2.0
)

// lagEnv is an env whose nodes' clocks are offset from the console's by
// known amounts, with the bookkeeping of their shifts.
type lagEnv struct {
	*env
	shift map[string]int64 // each node's clock against the console's, ms
}

func newLagEnv(t *testing.T, cfg simulator.Config, offsets ...time.Duration) *lagEnv {
	t.Helper()
	for i, o := range offsets {
		cfg.Nodes = append(cfg.Nodes, simulator.NodeConfig{Host: fmt.Sprintf("clock%d.test", i+1), ClockOffset: o})
	}
	e := &lagEnv{env: newEnv(t, cfg, len(offsets), testOptions{}), shift: map[string]int64{}}
	for i, n := range e.nodes {
		e.shift[n] = offsets[i].Milliseconds()
	}
	return e
}

// truth is node n's clock lag, in seconds.
func (e *lagEnv) truth(n string) float64 { return -float64(e.shift[n]) / 1000 }

// lag reads node n's gauge.
func lag(t *testing.T, m metrics, n string) (float64, bool) {
	t.Helper()
	s := m.series("indexima_node_clock_lag_seconds", l("node", n))
	if len(s) > 1 {
		t.Fatalf("%d clock lag series for node %s", len(s), n)
	}
	if len(s) == 0 {
		return 0, false
	}
	return s[0].value, true
}

// logSoon makes each node log an event starting within the next d of its
// own clock (at phase ms into it), lasting dur: it becomes visible as it
// starts, as on a console that shows its nodes' events at once.
func (e *lagEnv) logSoon(phase, dur int64) {
	for _, n := range e.nodes {
		e.sim.Append(n, simulator.Event{Type: simulator.TableLoaded, Date: e.nowMS() + e.shift[n] + phase,
			Duration: dur, Comment: "sales.orders"})
	}
}

// Issue 38: idle nodes whose clocks are right read 19.75 s (the time since
// their last event, as it were). Quiet nodes, an event every 20 s lasting
// about 20 s, scraped every 5 s, their clocks right, 30 s behind and 25 s
// ahead: no lag is shown until the listings tell it within 5 s, then it is
// the lag within 5 s, and within 2 s after a few events, on a console that
// lists running events and on one that lists events only once completed.
// Every event is counted once.
func TestClockLagOfQuietNodes(t *testing.T) {
	for _, profile := range []string{"running", "completed-only"} {
		t.Run(profile, func(t *testing.T) {
			cfg := simulator.Config{}
			if err := cfg.ApplyProfile(profile); err != nil {
				t.Fatal(err)
			}
			e := newLagEnv(t, cfg, 0, -30*time.Second, 25*time.Second)
			m := e.scrape(e.shift)
			for _, n := range e.nodes {
				if v, ok := lag(t, m, n); ok {
					t.Errorf("node %s: lag %gs shown before any event", n, v)
				}
			}
			shownAt := map[string]int{}
			for i := 0; i < 60; i++ {
				if i%4 == 0 {
					// Phases spread over the 5 s between two scrapes.
					k := int64(i / 4)
					e.logSoon(1+k*3090%5000, 20_000+k*1234%3000)
				}
				e.clock.Advance(5 * time.Second)
				m = e.scrape(e.shift)
				e.checkTruth(m, nil)
				for _, n := range e.nodes {
					v, ok := lag(t, m, n)
					if !ok {
						continue
					}
					if math.Abs(v-e.truth(n)) > lagPrecision || i >= 40 && math.Abs(v-e.truth(n)) > lagTolerance {
						t.Fatalf("scrape %d: node %s: lag %gs, want %gs", i, n, v, e.truth(n))
					}
					if _, seen := shownAt[n]; !seen {
						shownAt[n] = i
					}
				}
			}
			for _, n := range e.nodes {
				if _, ok := shownAt[n]; !ok {
					t.Errorf("node %s (lag %gs): no lag shown in 5 minutes of an event every 20 s", n, e.truth(n))
				}
			}
		})
	}
}

// Issue 38: after the console's and the nodes' clocks stepped back 90 s
// together (an NTP correction), a node read -87 s. Busy nodes whose clocks
// are right, 30 s behind and 25 s ahead; a step of 90 s, back or ahead, of
// the console's clock and the nodes' together, or of the first node's
// alone: within a few scrapes of evidence every node reads its lag within
// 2 s, and no reading is ever neither the old lag nor the new one. Once
// the clocks are past where they stepped from, every event is counted once.
func TestClockLagAfterClockSteps(t *testing.T) {
	for _, sc := range []struct {
		name        string
		cluster     time.Duration // the console's and every node's clock
		first       time.Duration // the first node's alone
		evidenceFor int           // scrapes the new lag may take to show
	}{
		// The simulator hides a node's events dated after its clock: after
		// a step back, until the node's clock is where it stepped from, its
		// count is below what the exporter read (the evidence of before
		// the step is dropped) and its new events are dated behind the
		// cursor, where listings start only once a search found them; the
		// lag may not be shown meanwhile. (A console that keeps showing
		// what its nodes logged gives evidence sooner: tracker's
		// wall-clock console.)
		{name: "cluster back", cluster: -90 * time.Second, evidenceFor: 60},
		{name: "cluster ahead", cluster: 90 * time.Second, evidenceFor: 8},
		{name: "node back", first: -90 * time.Second, evidenceFor: 60},
		{name: "node ahead", first: 90 * time.Second, evidenceFor: 8},
	} {
		for _, profile := range []string{"running", "completed-only"} {
			t.Run(sc.name+"/"+profile, func(t *testing.T) {
				cfg := simulator.Config{Rate: 1}
				if err := cfg.ApplyProfile(profile); err != nil {
					t.Fatal(err)
				}
				e := newLagEnv(t, cfg, 0, -30*time.Second, 25*time.Second)
				e.scrape(e.shift)
				i := 0
				stepBy := func(d time.Duration) metrics {
					t.Helper()
					i++
					e.logSoon(int64(1+i*309%1000), int64(300+i%3*2500))
					e.clock.Advance(d)
					return e.scrape(e.shift)
				}
				step := func() metrics { return stepBy(time.Second) }
				// Two minutes first, so that no clock steps back to before
				// first contact (the truth counts the events completed since,
				// by the nodes' clocks); then a few scrapes a second apart.
				for i := 0; i < 12; i++ {
					stepBy(10 * time.Second)
				}
				for i := 0; i < 5; i++ {
					step()
				}
				old := map[string]float64{}
				for _, n := range e.nodes {
					old[n] = e.truth(n)
				}
				e.clock.Advance(sc.cluster)
				if sc.first != 0 {
					e.sim.ShiftClock(e.nodes[0], sc.first)
					e.shift[e.nodes[0]] += sc.first.Milliseconds()
				}
				shownAt := map[string]int{}
				for i := 0; i < sc.evidenceFor+10; i++ {
					m := step()
					for _, n := range e.nodes {
						v, ok := lag(t, m, n)
						_, seen := shownAt[n]
						switch {
						case !ok:
						case math.Abs(v-e.truth(n)) <= lagTolerance:
							if !seen {
								shownAt[n] = i
							}
						case !seen && math.Abs(v-old[n]) <= lagTolerance:
							// No evidence of the step yet.
						default:
							t.Fatalf("scrape %d after the step: node %s: lag %gs, want %gs (or %gs before the evidence)", i, n, v, e.truth(n), old[n])
						}
					}
				}
				for _, n := range e.nodes {
					if at, ok := shownAt[n]; !ok || at > sc.evidenceFor {
						t.Errorf("node %s: lag %gs first shown %d scrapes after the step (%v), want at most %d", n, e.truth(n), at, ok, sc.evidenceFor)
					}
				}
				t.Logf("new lag first shown, by node, this many scrapes after the step: %v", shownAt)
				// Past where the clocks stepped from, and settled: exact.
				for i := 0; i < 10; i++ {
					stepBy(10 * time.Second)
				}
				e.sim.SetRate(0)
				e.clock.Advance(5 * time.Minute)
				e.scrape(e.shift)
				e.checkTruth(e.scrape(e.shift), nil)
			})
		}
	}
}
