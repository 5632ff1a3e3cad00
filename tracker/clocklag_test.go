package tracker

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/event"
)

// wallConsole is a console model in real time, apart from the simulator's:
// the node logs each event when it starts, dated by its own clock and
// timed by a monotonic one, and a listing shows what has happened by then,
// whatever the clocks do afterwards (a clock that steps back hides nothing
// the node logged; the simulator's log, a function of the node's clock,
// does). Counts are of completed events, bounds inclusive; runnings are
// listed in the listing's range when running is set, never otherwise.
type wallConsole struct {
	wall                int64 // real time, Unix ms
	consoleOff, nodeOff int64 // each clock against real time, ms
	running             bool
	events              []wallEvent
}

type wallEvent struct {
	start, end int64 // real time
	date       int64 // the node's clock at start
	comment    string
}

func (c *wallConsole) consoleNow() int64 { return c.wall + c.consoleOff }

// log makes an event start on the node at real time start, lasting dur ms.
func (c *wallConsole) log(start, dur int64) {
	c.events = append(c.events, wallEvent{start: start, end: start + dur, date: start + c.nodeOff,
		comment: fmt.Sprint(len(c.events))})
}

func (c *wallConsole) shown(since int64, e wallEvent) (completed, running bool) {
	if e.start > c.wall || e.date < since {
		return false, false
	}
	return e.end <= c.wall, c.running && e.end > c.wall
}

func (c *wallConsole) List(_ context.Context, q event.Query, h event.Handler) (ListingInfo, error) {
	var reqs, runs []event.Event
	lo, hi := q.Since, int64(maxInt64)
	if !q.IsSince() {
		lo, hi = q.Start, q.End
	}
	for _, e := range c.events {
		completed, running := c.shown(lo, e)
		switch {
		case completed && e.date <= hi:
			reqs = append(reqs, event.Event{Type: "TABLE_LOADED", Date: e.date, Duration: e.end - e.start, HasDuration: true, Comment: e.comment})
		case running && q.IsSince():
			runs = append(runs, event.Event{Type: "TABLE_LOADED", Date: e.date, Comment: e.comment})
		}
	}
	slices.SortStableFunc(reqs, func(a, b event.Event) int { return int(a.Date - b.Date) })
	if !q.IsSince() {
		if q.Order == event.Desc {
			slices.Reverse(reqs)
		}
		reqs = reqs[:min(len(reqs), q.Limit)]
	}
	for _, e := range reqs {
		if err := h.Event(e); err != nil {
			return ListingInfo{}, err
		}
	}
	for _, e := range runs {
		if err := h.Running(e); err != nil {
			return ListingInfo{}, err
		}
	}
	date := c.consoleNow() / 1000 * 1000
	return ListingInfo{Date: date, HasDate: true}, nil
}

func (c *wallConsole) Count(_ context.Context, start, end int64) (int64, error) {
	var n int64
	for _, e := range c.events {
		if completed, _ := c.shown(start, e); completed && e.date <= end {
			n++
		}
	}
	return n, nil
}

func (c *wallConsole) Clock(context.Context) (int64, bool, error) {
	return c.consoleNow() / 1000 * 1000, true, nil
}

// completedBy counts the events completed after from and by now (real time).
func (c *wallConsole) completedBy(from int64) uint64 {
	var n uint64
	for _, e := range c.events {
		if e.end > from && e.end <= c.wall {
			n++
		}
	}
	return n
}

// lagRun polls a wallConsole once a second (busy: an event or two a
// second, some long) and reports what the lag gauge reads.
type lagRun struct {
	t     *testing.T
	c     *wallConsole
	st    *State
	r     *rand.Rand
	busy  bool
	first int64 // real time of first contact
}

func newLagRun(t *testing.T, c *wallConsole, busy bool) *lagRun {
	c.wall = testEpoch.UnixMilli()
	return &lagRun{t: t, c: c, st: &State{}, r: rand.New(rand.NewPCG(7, 8)), busy: busy}
}

// poll moves real time by a second, logs the node's events of that second
// and polls; it returns the lag as the gauge shows it.
func (lr *lagRun) poll() (ms int64, ok bool) {
	lr.t.Helper()
	if lr.busy {
		for n := 1 + lr.r.IntN(2); n > 0; n-- {
			dur := int64(50 + lr.r.IntN(2000))
			if lr.r.IntN(8) == 0 {
				dur = int64(5000 + lr.r.IntN(20000))
			}
			lr.c.log(lr.c.wall+1+int64(lr.r.IntN(999)), dur)
		}
	}
	lr.c.wall += 1000
	if !lr.st.Contacted {
		lr.first = lr.c.wall
	}
	now := func() time.Time { return time.UnixMilli(lr.c.wall) }
	next, _, err := Poll(context.Background(), lr.c, lr.st, Options{Now: now})
	if err != nil {
		lr.t.Fatalf("poll: %v", err)
	}
	lr.st = next
	return lr.st.ClockLag()
}

// exact checks that every event completed since first contact was counted
// once, and reported agrees.
func (lr *lagRun) exact(when string) {
	lr.t.Helper()
	if got, want := sum(lr.st.Events), lr.c.completedBy(lr.first); got != want || lr.st.Reported != want {
		lr.t.Errorf("%s: counted %d, reported %d, want %d", when, got, lr.st.Reported, want)
	}
}

// lagTolerance is how close to the truth the tests want the lag shown:
// the Date header's second, and what the brackets of a busy node leave.
const lagTolerance = 1500

// lagStepPolls is how many polls after a step the tests wait for the new
// lag: a node's clock stepping back dates its events behind the cursor,
// where the listings start only once the engine learned it (a search, then
// a listing from further back: lateness.go), and it takes two polls of
// such evidence to confirm a step.
const lagStepPolls = 8

// Nodes whose clocks are right, behind or ahead of the console's; then a
// step of 90 s, of the node's clock alone, of the console's alone, or of
// both together (an NTP correction of the whole cluster), back or ahead:
// the lag shown is within a second and a half of the truth within a few
// polls of the evidence, and never a number that is neither the old truth
// nor the new one (the -87 s seen after both clocks stepped back 90 s
// together). Every event is counted once throughout.
func TestClockLagFollowsStepsOnAWallClockConsole(t *testing.T) {
	type step struct{ console, node int64 }
	for _, sc := range []struct {
		name    string
		nodeOff int64 // the node's clock against the console's before the step
		step    step
	}{
		{"node back alone", 0, step{node: -90_000}},
		{"node ahead alone", 0, step{node: 90_000}},
		{"console back alone", 0, step{console: -90_000}},
		{"console ahead alone", 0, step{console: 90_000}},
		{"both back", 0, step{console: -90_000, node: -90_000}},
		{"both ahead", 0, step{console: 90_000, node: 90_000}},
		{"node behind, both back", -30_000, step{console: -90_000, node: -90_000}},
		{"node ahead, both back", 25_000, step{console: -90_000, node: -90_000}},
	} {
		for _, running := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/runnings listed=%v", sc.name, running), func(t *testing.T) {
				c := &wallConsole{running: running, nodeOff: sc.nodeOff}
				lr := newLagRun(t, c, true)
				truth := -sc.nodeOff
				settled := false
				for i := 0; i < 10; i++ {
					ms, ok := lr.poll()
					settled = ok && abs(ms-truth) <= lagTolerance
				}
				if !settled {
					t.Fatalf("before the step: lag not shown within %d ms of %d ms after 10 polls", lagTolerance, truth)
				}
				c.consoleOff += sc.step.console
				c.nodeOff += sc.step.node
				old, truth := truth, truth+sc.step.console-sc.step.node
				seen := -1 // the first poll after the step that showed the new truth
				for i := 0; i < 30; i++ {
					ms, ok := lr.poll()
					switch {
					case !ok:
					case abs(ms-truth) <= lagTolerance:
						if seen < 0 {
							seen = i
						}
					case seen < 0 && abs(ms-old) <= lagTolerance:
						// No evidence of the step yet.
					default:
						t.Fatalf("poll %d after the step: lag %d ms shown, want %d ms (or %d ms before the evidence)", i, ms, truth, old)
					}
				}
				t.Logf("the new lag was first shown %d polls after the step", seen)
				if seen < 0 || seen > lagStepPolls {
					t.Errorf("the new lag was first shown %d polls after the step, want at most %d", seen, lagStepPolls)
				}
				if ms, ok := lr.st.ClockLag(); !ok || abs(ms-truth) > lagTolerance {
					t.Errorf("30 polls after the step: lag %d ms (shown: %v), want %d ms", ms, ok, truth)
				}
				if b := lr.st.Lateness.LagMS; b < truth || b > truth+2*lagTolerance {
					t.Errorf("the engine's bound of the lag is %d ms, want from %d to %d", b, truth, truth+2*lagTolerance)
				}
				lr.exact("after the step")
			})
		}
	}
}

// What one poll's bracket does to the lag: a bracket that agrees narrows
// it; one that disagrees is held in doubt (the lag is not shown, the
// engine takes the larger bound) until the next decides; two that agree
// with each other, on both sides, replace the older evidence; an empty one
// is not used; the evidence of the last hour only counts.
func TestLagBrackets(t *testing.T) {
	ref := testEpoch.UnixMilli()
	st := &State{ClockAt: ref}
	l := &st.Lateness
	shown := func(when string, want int64, ok bool, bound int64) {
		t.Helper()
		got, gotOK := st.ClockLag()
		if gotOK != ok || ok && got != want {
			t.Errorf("%s: lag shown %d (%v), want %d (%v)", when, got, gotOK, want, ok)
		}
		if !l.LagKnown || l.LagMS != bound {
			t.Errorf("%s: the engine's bound %d (%v), want %d", when, l.LagMS, l.LagKnown, bound)
		}
	}
	closed := func(lo, hi int64) lagBracket { return lagBracket{Lo: lo, Hi: hi, LoSet: true, HiSet: true} }
	upper := func(hi int64) lagBracket { return lagBracket{Hi: hi, HiSet: true} }

	l.noteLag(ref, upper(3000))
	shown("an upper bound alone", 0, false, 3000)
	l.noteLag(ref, closed(-500, 800))
	shown("a closed bracket", 150, true, 800)
	l.noteLag(ref, closed(-20_000, 20_000))
	shown("a wide bracket that agrees", 150, true, 800)
	l.noteLag(ref, closed(-500, 12_000))
	shown("after a wider one", 150, true, 800)

	l.noteLag(ref, closed(89_000, 91_000))
	shown("a bracket that disagrees", 0, false, 91_000)
	l.noteLag(ref, closed(0, 900))
	shown("the next agrees with the older evidence: the doubt is dropped", 400, true, 800)

	l.noteLag(ref, upper(-88_000))
	shown("an upper bound below the evidence", 0, false, 800)
	l.noteLag(ref, upper(-87_000))
	shown("a second one (events dated by a clock that stepped back)", 0, false, 800)
	l.noteLag(ref, closed(100, 700))
	shown("a closed bracket agreeing with the older evidence", 400, true, 700)

	l.noteLag(ref, closed(5_000, -5_000))
	shown("an empty bracket", 400, true, 700)

	l.noteLag(ref, closed(-91_000, -89_500))
	shown("a step", 0, false, 700)
	l.noteLag(ref, closed(-90_400, -89_000))
	shown("confirmed by the next poll", -89_950, true, -89_500)
	l.noteLag(ref, closed(-1000, 1000))
	shown("the evidence of before the step is gone: a doubt again", 0, false, 1000)

	later := ref + lateSlots*slotMS
	st.ClockAt = later
	shown("an hour later, nothing shown; the engine keeps the latest bound", 0, false, 1000)
	if _, doubt := l.doubt(later); doubt {
		t.Error("a doubt an hour old still stands")
	}
	l.noteLag(later, closed(-4000, 8000))
	shown("a bracket wider than 10 s", 0, false, 8000)
	l.noteLag(later, closed(-3000, 6000))
	shown("9 s wide", 1500, true, 6000)
}

// A state saved by the previous version has no "clock" key and may hold,
// in its "lag" slots, an upper bound that is wrong (the -87 s read after a
// step of both clocks back): nothing is shown until the listings tell the
// lag, and they do within three polls.
func TestClockLagFromAPreviousVersionsState(t *testing.T) {
	c := &wallConsole{running: true}
	lr := newLagRun(t, c, true)
	for i := 0; i < 10; i++ {
		lr.poll()
	}
	var old State
	b, err := lr.st.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &old); err != nil {
		t.Fatal(err)
	}
	old.Lateness.Clock = clockEvidence{}
	for i := range old.Lateness.Lag {
		if old.Lateness.Lag[i].Set {
			old.Lateness.Lag[i].V = -87_000
		}
	}
	old.Lateness.LagMS = -87_000
	lr.st = &old
	if ms, ok := lr.st.ClockLag(); ok {
		t.Fatalf("lag %d ms shown from the previous version's state", ms)
	}
	for i := 0; ; i++ {
		ms, ok := lr.poll()
		if ok && abs(ms) <= lagTolerance {
			break
		}
		if ok || i >= 3 {
			t.Fatalf("poll %d after the restore: lag %d ms (shown: %v), want 0", i, ms, ok)
		}
	}
	lr.exact("after the restore")
}
