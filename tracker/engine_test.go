package tracker

import (
	"context"
	"os"

	"fmt"
	"github.com/go-kit/log"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// scenario is one seeded schedule of a node's life and of the polls that
// read it, on one console profile.
type scenario struct {
	seed         uint64
	profile      string
	countRunning bool
	lag          time.Duration // the node's clock against the console's
	listingCap   int
	maxLimit     int
	exclusive    bool
	faults       bool // calls fail now and then
	tooLarge     int  // lastevents listings of more reqs are refused
	rewinds      bool // the node's clock steps back now and then
	polls        int
}

// blind tells a console that lists events only once completed but counts
// running ones: the engine cannot tell its running events from missing ones.
func (sc scenario) blind() bool {
	return sc.countRunning && (sc.profile == "completed-only" || sc.profile == "console-clock-completed-only")
}

func (sc scenario) String() string {
	return fmt.Sprintf("seed=%d profile=%s count_running=%v lag=%v cap=%d max_limit=%d exclusive=%v faults=%v too_large=%d rewinds=%v",
		sc.seed, sc.profile, sc.countRunning, sc.lag, sc.listingCap, sc.maxLimit, sc.exclusive, sc.faults, sc.tooLarge, sc.rewinds)
}

// randomScenario draws a scenario from a seed: every profile, both count
// semantics, lagging clocks, caps, faults, refused listings and rewinds.
func randomScenario(seed uint64) scenario {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	names := simulator.ProfileNames()
	sc := scenario{seed: seed, profile: names[r.IntN(len(names))], countRunning: r.IntN(2) == 0, polls: 40}
	if r.IntN(3) == 0 {
		sc.lag = -time.Duration(r.IntN(120)) * time.Second
	}
	if r.IntN(4) == 0 {
		sc.listingCap = 5 + r.IntN(30)
	}
	if r.IntN(4) == 0 {
		sc.maxLimit = 6 + r.IntN(20)
	}
	sc.exclusive = r.IntN(3) == 0
	sc.faults = r.IntN(3) == 0
	if r.IntN(4) == 0 {
		sc.tooLarge = 40 + r.IntN(60)
	}
	sc.rewinds = r.IntN(5) == 0
	return sc
}

// outcome of a scenario.
type outcome struct {
	polls, failed int
	calls         int
	counted       uint64
	reported      uint64
	state         *State
}

// run plays the scenario and checks, after every successful poll, that the
// counters equal the truth: the node's events that completed after first
// contact and by the latest time the node's clock showed at a poll. At the
// end it lets every event complete and checks the self-check.
func (sc scenario) run(t testing.TB) outcome {
	t.Helper()
	clock := simulator.NewManualClock(testEpoch)
	cfg := simulator.Config{Clock: clock, Seed: int64(sc.seed), Rate: 1.5,
		Nodes: []simulator.NodeConfig{{Host: "n1", ClockOffset: sc.lag}, {Host: "n2"}}, Readings: simulator.Readings{CountRunning: sc.countRunning, ListingCap: sc.listingCap, MaxLimit: sc.maxLimit, ExclusiveSince: sc.exclusive}}
	if err := cfg.ApplyProfile(sc.profile); err != nil {
		t.Fatal(err)
	}
	sim := simulator.New(cfg)
	node := sim.Nodes()[0]
	con := newSimConsole(sim, node)
	con.tooLarge = sc.tooLarge
	r := rand.New(rand.NewPCG(sc.seed, 0xfa17))
	if sc.faults {
		con.fail = func(int, *Query) error {
			if r.IntN(12) == 0 {
				return errInjected
			}
			return nil
		}
	}
	shift := int64(0)
	nodeNow := func() int64 { return clock.Now().UnixMilli() + sc.lag.Milliseconds() + shift }
	// A console that caps :limit silently at a few events makes the
	// look-back read a few events a call: enough calls to cover the window
	// (with fewer, the window starts where the look-back stopped, and an
	// event running across that point is not the engine's to find).
	opts := Options{Now: clock.Now, Window: 20 * time.Minute, LookBackCalls: 400}
	if *debugSeed != 0 {
		opts.Logger = log.NewLogfmtLogger(log.NewSyncWriter(os.Stderr))
	}
	st := &State{}
	var base, baseSeq int64
	var out outcome
	// done holds the events that had completed at the node's clock of some
	// successful poll, among those logged after first contact or completing
	// after it: the truth. A node's clock going back does not undo them.
	done := map[int64]string{}
	everRunning := map[int64]simulator.Event{}
	markDone := func(now int64) {
		for _, e := range sim.Truth(node) {
			if (e.Seq > baseSeq || e.CompletedAt > base) && e.CompletedAt <= now {
				done[e.Seq] = e.Type
			}
		}
	}
	incomplete := false // the latest poll's search ran out of budget
	// high is the latest the node's clock showed at a poll. While a node's
	// clock is behind it (stepped back), the console no longer shows some
	// events the engine has read, and its counts cannot show a miss; the
	// engine is exact again once the clock has caught up.
	var high int64
	wantNow := func() map[string]uint64 {
		want := map[string]uint64{}
		for _, typ := range done {
			want[typ]++
		}
		return want
	}
	check := func(when string) {
		t.Helper()
		want := wantNow()
		if incomplete || nodeNow() < high || sc.blind() {
			for typ, n := range st.Events {
				if n > want[typ] {
					t.Fatalf("%v: %s: %s counted %d, more than the %d there are", sc, when, typ, n, want[typ])
				}
			}
			return
		}
		if d := diff(st.Events, want); d != "" {
			if *debugSeed != 0 {
				byFP := map[kEntry]int{}
				for _, e := range sim.Truth(node) {
					if done[e.Seq] != "" {
						byFP[kEntry{e.Date, fingerprint(toEvent(e, true))}]++
					}
				}
				for k, n := range byFP {
					if c := st.Known.count(k); c != n {
						t.Logf("fp %v: done %d, known %d (floor %d, cursor %d)", k, n, c, st.Floor, st.Cursor)
					}
				}
				for _, k := range st.Known.entries {
					if byFP[k] == 0 {
						t.Logf("known %v not done", k)
					}
				}
			}
			t.Fatalf("%v: %s: %s", sc, when, d)
		}
	}
	poll := func() bool {
		next, rep, err := Poll(context.Background(), con, st, opts)
		if *debugSeed != 0 {
			t.Logf("poll: %+v err=%v nodeNow=%d", rep, err, nodeNow())
			if next != nil {
				running := 0
				for _, e := range sim.Truth(node) {
					if e.Date >= st.Floor && e.Date <= nodeNow() && e.CompletedAt > nodeNow() {
						running++
					}
				}
				for _, e := range sim.Truth(node) {
					if e.Date >= st.Floor && e.CompletedAt <= nodeNow() && e.Date <= nodeNow() && next.Known.count(kEntry{e.Date, fingerprint(toEvent(e, true))}) == 0 {
						t.Logf("   unknown completed: %+v (base %d, baseSeq %d, done %v)", e, base, baseSeq, done[e.Seq] != "")
					}
				}
				t.Logf("   reported=%d counted=%d check=%+v sem=%+v floor=%d (old %d) count(oldfloor)=%d known=%d baseline=%d running=%d", next.Reported, sum(next.Events), next.Check, next.Semantics, next.Floor, st.Floor,
					sim.EventCount(node, st.Floor, st.Cursor+lookaheadMS), next.Known.countRange(st.Floor, maxInt64), next.Known.baselineFrom(st.Floor), running)
			}
		}
		out.polls++
		out.calls += rep.Calls
		if next == nil {
			out.failed++
			return false
		}
		if !st.Contacted {
			base = nodeNow()
			for _, e := range sim.Truth(node) {
				baseSeq = max(baseSeq, e.Seq)
			}
		}
		st = next
		if *debugSeed != 0 {
			for _, e := range sim.Truth(node) {
				if e.Date >= st.Floor && e.Date <= nodeNow() && e.CompletedAt > nodeNow() {
					everRunning[e.Seq] = e
				}
			}
		}
		markDone(nodeNow())
		high = max(high, nodeNow())
		incomplete = rep.Incomplete || err != nil // a partial poll
		return err == nil
	}
	for i := 0; i < sc.polls; i++ {
		switch x := r.IntN(20); {
		case x == 0:
			clock.Advance(time.Duration(1+r.IntN(8)) * time.Minute) // an outage
		default:
			clock.Advance(time.Duration(200+r.IntN(2800)) * time.Millisecond)
		}
		if r.IntN(4) == 0 {
			sim.Append(node, someEvents(r, nodeNow())...)
		}
		if sc.rewinds && r.IntN(15) == 0 {
			d := -time.Duration(1+r.IntN(90)) * time.Second
			sim.ShiftClock(node, d)
			shift += d.Milliseconds()
		}
		if poll() && st.Contacted {
			check(fmt.Sprintf("poll %d", i))
		}
	}
	// Quiet: no new events; let every event complete, polling now and then.
	sim.SetRate(0)
	clock.Advance(2 * time.Second) // the current simulated second may still hold events
	var lastEnd int64
	for _, e := range sim.Truth(node) {
		lastEnd = max(lastEnd, e.CompletedAt)
	}
	for i := 0; i < 60 && nodeNow() <= lastEnd; i++ {
		clock.Advance(time.Duration(30+r.IntN(60)) * time.Second)
		poll()
	}
	for i := 0; i < 3 && nodeNow() <= lastEnd+1000; i++ {
		clock.Advance(time.Second)
	}
	for i := 0; i < 100; i++ {
		clock.Advance(time.Second)
		if poll() && !incomplete {
			break
		}
	}
	if sc.blind() {
		// Misses look like running events until a search finds them: the
		// backoff of futile searches delays them at most 64 polls.
		for i := 0; i < 70 && diff(st.Events, wantNow()) != ""; i++ {
			clock.Advance(time.Second)
			poll()
		}
	}
	con.fail = nil
	clock.Advance(time.Second)
	if !poll() {
		t.Fatalf("%v: the last poll failed", sc)
	}
	if !st.Contacted {
		t.Fatalf("%v: never contacted", sc)
	}
	check("end")
	out.counted, out.reported, out.state = sum(st.Events), st.Reported, st
	if *debugSeed != 0 {
		mult := map[kEntry]int{}
		for _, e := range sim.Truth(node) {
			if e.Date >= st.Floor && e.CompletedAt <= nodeNow() {
				mult[kEntry{e.Date, fingerprint(toEvent(e, true))}]++
			}
		}
		for k, n := range mult {
			if c := st.Known.count(k); c != n {
				t.Logf("known %v: %d, console %d", k, c, n)
			}
		}
		doneFP := map[kEntry]int{}
		for _, e := range sim.Truth(node) {
			if done[e.Seq] != "" && e.Date >= st.Floor {
				doneFP[kEntry{e.Date, fingerprint(toEvent(e, true))}]++
			}
		}
		for k, n := range doneFP {
			if c := st.Known.count(k); c < n {
				t.Logf("done %v x%d, known x%d", k, n, c)
			}
		}
		for seq, e := range everRunning {
			if done[seq] == "" {
				t.Logf("ran, never done: %+v", e)
			}
		}
		t.Logf("console count %d, known %d", sim.EventCount(node, st.Floor, st.Cursor+lookaheadMS), st.Known.countRange(st.Floor, maxInt64))
	}
	if !sc.rewinds && !sc.blind() && out.reported != out.counted {
		t.Fatalf("%v: reported %d, counted %d at rest", sc, out.reported, out.counted)
	}
	return out
}

// someEvents makes a few events that started up to 2 s ago and complete
// from now on (as a node logs them): short ones, long ones, identical ones
// at one millisecond.
func someEvents(r *rand.Rand, now int64) []simulator.Event {
	types := simulator.EventTypes
	var evs []simulator.Event
	for n := 1 + r.IntN(4); n > 0; n-- {
		ago := int64(r.IntN(2000))
		e := simulator.Event{Type: types[r.IntN(len(types))], Date: now - ago,
			Duration: ago + int64(1+r.IntN(3700)), Comment: fmt.Sprint(r.IntN(3))}
		if r.IntN(6) == 0 {
			e.Duration = ago + int64(60_000+r.IntN(600_000))
		}
		evs = append(evs, e)
		if r.IntN(5) == 0 {
			evs = append(evs, e, e)
		}
	}
	return evs
}

// Thousands of seeded schedules over every console profile: every event
// counted once at every poll, and the self-check balanced at rest.
func TestSeededSchedules(t *testing.T) {
	n := 2000
	switch {
	case testing.Short():
		n = 200
	case raceEnabled:
		n = 1000
	}
	var calls, polls int
	for seed := *seedBase + 1; seed <= *seedBase+uint64(n); seed++ {
		out := randomScenario(seed).run(t)
		calls += out.calls
		polls += out.polls
	}
	t.Logf("%d schedules, %d polls, %.2f calls per poll", n, polls, float64(calls)/float64(polls))
}

// Each console behaviour alone.
func TestScenarioPerFeature(t *testing.T) {
	base := scenario{seed: 7, profile: "running", polls: 40}
	cases := featureCases
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			for seed := uint64(1); seed <= 30; seed++ {
				sc := base
				sc.seed = seed
				f(&sc)
				sc.run(t)
			}
		})
	}
}

// featureCases are the console behaviours, each set alone on a scenario.
var featureCases = map[string]func(*scenario){
	"running":        func(*scenario) {},
	"count running":  func(s *scenario) { s.countRunning = true },
	"completed only": func(s *scenario) { s.profile = "completed-only" },
	"console clock":  func(s *scenario) { s.profile = "console-clock"; s.lag = -40 * time.Second },
	"console clock completed only": func(s *scenario) {
		s.profile = "console-clock-completed-only"
		s.lag = -70 * time.Second
	},
	"newest first":     func(s *scenario) { s.profile = "newest-first" },
	"listing cap":      func(s *scenario) { s.listingCap = 7 },
	"newest first cap": func(s *scenario) { s.profile = "newest-first"; s.listingCap = 7 },
	"max limit":        func(s *scenario) { s.listingCap = 7; s.maxLimit = 6 },
	"exclusive":        func(s *scenario) { s.exclusive = true },
	"faults":           func(s *scenario) { s.faults = true },
	"too large":        func(s *scenario) { s.tooLarge = 40 },
	"rewinds":          func(s *scenario) { s.rewinds = true },
}
