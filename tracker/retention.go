package tracker

import (
	"context"

	"github.com/go-kit/log/level"

	"github.com/indexima-exporter/indexima_exporter/event"
)

// Retention is what the engine learned of a console that forgets.
//
// The specification says nothing of how long a console keeps a node's
// events. One that forgets them (after a while, or beyond the newest N)
// counts fewer events in the window than the engine knows: compared whole,
// the window's count would let the forgotten ones hide as many missed ones
// elsewhere. So once the engine has seen the console forget, it checks only
// the part of the window the console still remembers: the count's interval
// starts a margin after where forgetting has reached (checkFrom), predicted
// from what was learned (how old the oldest remembered event was, or how
// many events were remembered: whichever foretold the forgetting found the
// last time) and from how far the clock and the log move in a poll. The prediction costs nothing; when it fails (the count falls
// below the known events again), forgotten looks where the console's memory
// now starts (one call) and counts from there (one more).
//
// Exact on such a console: every event it still lists a few polls after it
// became visible. Not counted: an event it forgets within a poll or two of
// showing it, dated before the checked interval. The self-check reports the
// console's own number over the checked interval, so it stays true to what
// the console still holds (docs/counting.md).
type Retention struct {
	Seen bool `json:"seen"`
	// AgeMS is how far behind the console's clock (the cursor without one)
	// the oldest remembered event was when last looked at; Keep how many
	// events the console remembered then.
	AgeMS int64 `json:"age_ms,omitempty"`
	Keep  int64 `json:"keep,omitempty"`
	// ByNumber is set when the console forgets by the number of events it
	// keeps rather than by their age: whichever of the two models foretold
	// better where forgetting was found the last time it was looked at.
	ByNumber bool `json:"by_number,omitempty"`
	// StepMS and PerPoll follow how far the clock moves and how many new
	// events a poll sees (moving averages): the margin ahead of forgetting.
	StepMS  int64 `json:"step_ms,omitempty"`
	PerPoll int64 `json:"per_poll,omitempty"`
	// Wait counts the polls to let pass before looking again, after a look
	// found nothing forgotten (a node whose clock went back).
	Wait int `json:"wait,omitempty"`
	// Below counts the polls in a row whose count fell short of the known
	// events by no more than events completing between count and listing
	// can explain.
	Below int `json:"below,omitempty"`
	// Polls counts the polls since forgetting was last found where it was
	// not predicted: where the console's memory starts is looked at again
	// after 4, 8, 16, ... 256 of them (recheckRetention), then once per
	// late window, so that a model learned at an odd moment does not last.
	Polls int `json:"polls,omitempty"`
}

// recheckDue tells whether the poll should look where the console's memory
// starts.
func (r *Retention) recheckDue() bool {
	return r.Seen && r.Polls >= 4 && r.Polls <= 256 && r.Polls&(r.Polls-1) == 0
}

// notePoll follows the clock's step and the new events of a poll; an
// outage (a step many times the usual one) moves them little: the margin
// is for the usual poll, and a poll after an outage pays a look.
func (r *Retention) notePoll(stepMS, fresh int64) {
	if stepMS > 0 {
		if r.StepMS > 0 {
			stepMS = min(stepMS, 2*r.StepMS)
		}
		r.StepMS = ewma(r.StepMS, stepMS)
	}
	if r.PerPoll > 0 {
		fresh = min(fresh, 2*r.PerPoll+2)
	}
	r.PerPoll = ewma(r.PerPoll, fresh)
}

func ewma(avg, v int64) int64 {
	switch step := (v - avg) / 4; {
	case avg == 0:
		return v
	case step == 0 && v < avg:
		return avg - 1 // down to nothing, on a node gone quiet
	default:
		return avg + step
	}
}

// checkFrom is where the count's interval starts: the floor, or, on a
// console seen forgetting, a margin of a few polls after where forgetting
// is predicted to have reached by then (what lies before it is forgotten,
// or about to be: events listed there are counted by the listing all the
// same), and from (the listing's start) when the console remembers barely
// more than a poll's events.
func (p *pollRun) checkFrom(st *State, from int64) int64 {
	lo := st.Floor
	r := st.Retention
	if !r.Seen {
		return lo
	}
	age, number := st.predictForgotten()
	if r.ByNumber {
		if keep := r.Keep - 2*r.PerPoll; keep <= 0 {
			// It keeps no more than a poll's events: only those newer than
			// every known one are surely still there at the next poll.
			number = st.Cursor + 1
		} else if d, ok := st.Known.dateBeforeLast(int(keep), maxInt64-1); ok {
			number = d
		}
		lo = max(lo, number)
	} else {
		lo = max(lo, age+2*r.StepMS+1000)
	}
	// Not past the newest date the engine has seen: what the console
	// showed last is always checked.
	return min(lo, max(st.Cursor+1, st.Floor))
}

// forgotten deals with a count of [lo, end] below the events the engine
// knows there. The oldest event the console still lists there (one call)
// tells why: if it is no older than the oldest known, the console forgot
// events (perhaps part of that millisecond): the engine learns how much it
// keeps, and counts again from the next millisecond (one call), which is
// what this poll checks. If the console still holds an older one, nothing
// was forgotten at the old end: the node's clock went back (some of its
// latest events are not shown for now), and this poll's count proves
// nothing; the engine looks again only after a few polls. trusted is false
// when the poll's count cannot be used.
func (p *pollRun) forgotten(ctx context.Context, st *State, s *listingReader, lo, end, gap int64) (newLo, count int64, trusted bool, err error) {
	if st.Retention.Wait > 0 {
		st.Retention.Wait--
		return lo, 0, false, nil
	}
	oldest, known := st.Known.firstDateFrom(lo)
	ps := p.newReader(st, modeCount)
	b := &staged{s: ps}
	if _, err := p.con.List(ctx, event.Range(event.Asc, lo, end, 1), b); err != nil {
		return lo, 0, false, err
	}
	b.commit()
	p.rep.EventsCounted += ps.fresh
	if !known {
		return lo, 0, false, nil
	}
	o := ps.minDate
	if ps.reqs == 0 {
		// Nothing remembered in [lo, end]: forgetting has reached past the
		// newest known event at least.
		newest, _ := st.Known.maxDate()
		o = min(newest+1, end)
	}
	back := o < oldest
	if o == oldest {
		// Still there, all of that millisecond? Then nothing was forgotten.
		n, err := p.con.Count(ctx, o, o)
		if err != nil {
			return lo, 0, false, err
		}
		back = n >= st.Known.countRange(o, o)
	}
	if back {
		st.Retention.Wait = 4
		st.Lateness.clockStepped()
		level.Debug(p.o.Logger).Log("msg", "the console counts fewer events than the exporter knows, but remembers the oldest: its clock went back? (this poll's count is not used)",
			"from", lo)
		return lo, 0, false, nil
	}
	if st.Known.countRange(o, o) > 0 {
		// The console may have forgotten part of that millisecond (it
		// keeps a number of events): check from the next one.
		o++
	}
	count, err = p.con.Count(ctx, o, end)
	if err != nil {
		return lo, 0, false, err
	}
	if !st.Retention.Seen {
		level.Info(p.o.Logger).Log("msg", "the console forgets old events: the self-check covers what it still remembers",
			"oldest_remembered", o, "remembered", count)
	}
	edge := st.forgottenEdge(lo, o)
	// What it remembers from o on: the count's interval may stop short of
	// the latest events (a console whose running events are counted, not
	// listed: countEnd), the known events do not.
	st.learnRetention(edge, max(count, st.Known.countRange(o, maxInt64)))
	st.Retention.Polls = 0
	if s.fresh == 0 && st.Retention.PerPoll == 0 {
		// Forgetting on a node that logs nothing new is by age.
		st.Retention.ByNumber = false
	}
	if count < st.Known.countRange(o, end) {
		// Forgetting as we speak: check what is left next poll.
		return o, count, false, nil
	}
	return o, count, true, nil
}

// learnRetention records that the oldest event the console remembers is
// dated o and that it remembers keep events from there on.
func (st *State) learnRetention(o, keep int64) {
	r := &st.Retention
	if r.Seen {
		// Judged only when the two tell apart (more than a poll's step):
		// on a quiet node they agree, and noise would decide.
		if age, number := st.predictForgotten(); abs(age-number) > max(r.StepMS, 1000) {
			r.ByNumber = abs(o-number) < abs(o-age)
		}
	}
	r.Seen, r.Wait = true, 0
	r.AgeMS, r.Keep = max(st.refClock()-o, 0), keep
}

// recheckRetention looks where the console's memory starts (one call, in
// place of the full check a forgetting console cannot answer): a
// prediction too cautious (a checked interval starting after events the
// console still remembers) is corrected, as one too bold is by forgotten.
func (p *pollRun) recheckRetention(ctx context.Context, st *State) error {
	end := p.countEnd(st)
	ps := p.newReader(st, modeCount)
	b := &staged{s: ps}
	if _, err := p.con.List(ctx, event.Range(event.Asc, st.Floor, end, 1), b); err != nil {
		return err
	}
	b.commit()
	p.rep.EventsCounted += ps.fresh
	if ps.reqs > 0 {
		st.learnRetention(st.forgottenEdge(st.Floor, ps.minDate), st.Known.countRange(ps.minDate, maxInt64))
	}
	st.Check.LastFull = st.refClock()
	return nil
}

// forgottenEdge is where forgetting has reached, the oldest remembered
// event being dated o: past the newest known event before it (from lo on),
// and not past o. The estimate is the former: a model that trails the
// console costs a look when it forgets a known event again; one that runs
// ahead would leave events it still holds unchecked.
func (st *State) forgottenEdge(lo, o int64) int64 {
	if d, ok := st.Known.dateBeforeLast(1, o-1); ok && d >= lo {
		return d + 1
	}
	return o
}

// predictForgotten is where forgetting has reached now by each model: by
// age, and by number (the Keep-th newest known event).
func (st *State) predictForgotten() (age, number int64) {
	r := st.Retention
	age = st.refClock() - r.AgeMS
	number = st.Floor
	if d, ok := st.Known.dateBeforeLast(int(max(r.Keep, 1)), maxInt64-1); ok {
		number = d
	}
	return age, number
}
