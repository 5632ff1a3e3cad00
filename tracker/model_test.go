package tracker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/indexima-exporter/indexima_exporter/event"
	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// simConsole is a console model for the engine's tests: one node of the
// simulator answered in-process (the simulator's own listing and count
// code, profiles included, without HTTP), with injectable trouble.
type simConsole struct {
	sim  *simulator.Simulator
	node string

	calls int // calls answered
	// fail, when set, is asked before each call: a non-nil error fails it.
	fail func(call int, q *event.Query) error
	// tooLarge refuses lastevents listings of more than this many reqs (0: none).
	tooLarge int
	// hide drops events from every listing (but not from the count): a
	// console that loses them, for the self-check.
	hide func(simulator.Event) bool
	// requests counts calls by kind: "lastevents", "asc", "desc", "count".
	requests map[string]int
	// shownRunning records the running events lastevents listings handed
	// over (those the engine tracks), by sequence number, when set.
	shownRunning map[int64]bool
}

func newSimConsole(sim *simulator.Simulator, node string) *simConsole {
	return &simConsole{sim: sim, node: node, requests: map[string]int{}}
}

var errInjected = errors.New("injected console failure")

func (c *simConsole) List(ctx context.Context, q event.Query, h event.Handler) (ListingInfo, error) {
	c.calls++
	if c.fail != nil {
		if err := c.fail(c.calls, &q); err != nil {
			return ListingInfo{}, err
		}
	}
	var l simulator.Listing
	if q.IsSince() {
		c.requests["lastevents"]++
		l = c.sim.LastEvents(c.node, q.Since)
		if c.tooLarge > 0 && len(l.Reqs) > c.tooLarge {
			// A client stops reading at its body bound: some events were
			// handed over before the refusal.
			for _, e := range l.Reqs[:c.tooLarge/2] {
				if err := h.Event(toEvent(e, true)); err != nil {
					return ListingInfo{}, err
				}
			}
			return ListingInfo{}, fmt.Errorf("%w: %d events", ErrTooLarge, len(l.Reqs))
		}
	} else {
		if q.Order == event.Desc {
			c.requests["desc"]++
		} else {
			c.requests["asc"]++
		}
		l = c.sim.EventRange(c.node, q.Order == event.Desc, q.Start, q.End, q.Limit)
	}
	for _, e := range l.Reqs {
		if c.hide != nil && c.hide(e) {
			continue
		}
		if err := h.Event(toEvent(e, true)); err != nil {
			return ListingInfo{}, err
		}
	}
	for _, e := range l.Runnings {
		if c.shownRunning != nil && q.IsSince() {
			c.shownRunning[e.Seq] = true
		}
		if err := h.Running(toEvent(e, false)); err != nil {
			return ListingInfo{}, err
		}
	}
	return ListingInfo{Last: l.Last, HasLast: true, Date: l.Date, HasDate: l.Date != 0}, nil
}

func (c *simConsole) Clock(context.Context) (int64, bool, error) {
	if c.sim.Readings().NoDate {
		return 0, false, nil
	}
	return c.sim.ConsoleNow() / 1000 * 1000, true, nil
}

func (c *simConsole) Count(ctx context.Context, start, end int64) (int64, error) {
	c.calls++
	c.requests["count"]++
	if c.fail != nil {
		if err := c.fail(c.calls, nil); err != nil {
			return 0, err
		}
	}
	return c.sim.EventCount(c.node, start, end), nil
}

func toEvent(e simulator.Event, completed bool) event.Event {
	if completed {
		return event.Event{Type: e.Type, Date: e.Date, Duration: e.Duration, HasDuration: true, Comment: e.Comment}
	}
	return event.Event{Type: e.Type, Date: e.Date, Comment: e.Comment}
}

func sum(m map[string]uint64) uint64 {
	var n uint64
	for _, v := range m {
		n += v
	}
	return n
}

// diff describes how counted differs from want ("" when equal).
func diff(counted, want map[string]uint64) string {
	out := ""
	for t, w := range want {
		if counted[t] != w {
			out += fmt.Sprintf(" %s: counted %d, want %d;", t, counted[t], w)
		}
	}
	for t, c := range counted {
		if _, ok := want[t]; !ok && c != 0 {
			out += fmt.Sprintf(" %s: counted %d, want 0;", t, c)
		}
	}
	return out
}

var testEpoch = time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)
