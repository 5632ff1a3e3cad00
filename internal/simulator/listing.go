package simulator

import (
	"net/http"
	"sort"
	"strconv"
	"sync"
)

// listingQuery selects the reqs of a listing: events with lo <= date <= hi
// (inclusive, after the console's bounds reading) that have completed by the
// node's now. limit caps them (0 with !limited: no cap); desc walks from the
// newest. echo is the value a console whose `last` is the newest event
// returned echoes when it returns none (:time, or :start).
type listingQuery struct {
	lo, hi  int64
	limit   int
	limited bool // asc/desc: limit 0 means no events at all
	desc    bool
	echo    int64
}

// logKey orders the log: by date, then by insertion.
type logKey struct{ date, seq int64 }

func (a logKey) less(b logKey) bool { return a.date < b.date || a.date == b.date && a.seq < b.seq }

// indexOf returns the first log index whose key is not below k. Caller
// holds mu.
func (n *node) indexOf(k logKey) int {
	return sort.Search(len(n.log), func(i int) bool { return !(logKey{n.log[i].Date, n.log[i].Seq}).less(k) })
}

// retainedFrom returns the index of the node's oldest event still
// remembered at now (Readings.RetainFor, RetainLast); the events before it
// are forgotten for good, whatever the readings or the clock do later.
// Caller holds mu.
func (n *node) retainedFrom(now int64, rd *Readings) int {
	if rd.RetainFor > 0 {
		if k := (logKey{date: now - rd.RetainFor.Milliseconds()}); n.forgot.less(k) {
			n.forgot = k
		}
	}
	if rd.RetainLast > 0 {
		if i := n.upperBound(now) - rd.RetainLast; i > 0 {
			if k := (logKey{n.log[i].Date, n.log[i].Seq}); n.forgot.less(k) {
				n.forgot = k
			}
		}
	}
	if n.forgot == (logKey{}) {
		return 0
	}
	return n.indexOf(n.forgot)
}

// shown tells whether a listing shows ev as completed at now.
func shown(ev *Event, now int64) bool { return ev.CompletedAt <= now && !ev.Aborted }

// collect returns the reqs and runnings of q at the node's now. Runnings are
// every event running on the node at now, whatever the range: they are the
// node's current activity, not part of the history being listed. A capped
// listing keeps the oldest events of its range, or the newest with
// CapKeepsNewest; either way the reqs come in the listing's order. Caller
// holds n.mu.
func (n *node) collect(q listingQuery, now int64, rd *Readings, scratch []Event) (reqs, runnings []Event) {
	hi := min(q.hi, now)
	capped := q.limited || q.limit > 0
	reqs = scratch[:0]
	first := n.retainedFrom(now, rd)
	if q.lo <= hi && !(capped && q.limit == 0) {
		from, to := max(n.lowerBound(q.lo), first), n.upperBound(hi)
		// Walk from the end the cap keeps; reverse if the listing's order
		// is the other one.
		fromNewest := q.desc
		if !q.limited && capped {
			fromNewest = rd.CapKeepsNewest
		}
		if !fromNewest {
			for i := from; i < to; i++ {
				if shown(&n.log[i], now) {
					reqs = append(reqs, n.log[i])
					if capped && len(reqs) >= q.limit {
						break
					}
				}
			}
		} else {
			for i := to - 1; i >= from; i-- {
				if shown(&n.log[i], now) {
					reqs = append(reqs, n.log[i])
					if capped && len(reqs) >= q.limit {
						break
					}
				}
			}
		}
		if fromNewest != q.desc {
			for i, j := 0, len(reqs)-1; i < j; i, j = i+1, j-1 {
				reqs[i], reqs[j] = reqs[j], reqs[i]
			}
		}
	}
	for _, ev := range n.runningAt(now) {
		if !ev.Aborted && n.indexOf(logKey{ev.Date, ev.Seq}) >= first {
			runnings = append(runnings, ev)
		}
	}
	return reqs, runnings
}

// answer computes node n's listing for q at the node's now under the
// readings rd: its reqs, its runnings (none unless listed) and its `last`.
// Day and lastevents listings are newest first with NewestFirst. Caller
// holds n.mu.
func (s *Simulator) answer(n *node, q listingQuery, now int64, rd *Readings, scratch []Event) (reqs, runnings []Event, last int64) {
	if !q.limited && rd.NewestFirst {
		q.desc = true
	}
	reqs, runnings = n.collect(q, now, rd, scratch)
	if rd.Runnings != RunningsListed {
		runnings = nil
	}
	switch rd.Last {
	case LastConsoleClock:
		last = s.clock.Now().UnixMilli()
	case LastAhead:
		last = s.clock.Now().UnixMilli() + 24*3600*1000
	case LastNewest:
		last, ok := q.echo, false
		for _, l := range [][]Event{reqs, runnings} {
			for i := range l {
				if !ok || l[i].Date > last {
					last, ok = l[i].Date, true
				}
			}
		}
		return reqs, runnings, last
	default:
		last = now
	}
	return reqs, runnings, last
}

// count is the answer of event/count: the completed events with
// lo <= date <= hi at the node's now (and the running or aborted ones with
// CountRunning), forgotten ones aside. The events in range are two binary
// searches; those not yet completed are among the few still open
// (runningAt keeps them), so a count over a long window costs no scan of it.
// Caller holds n.mu.
func (s *Simulator) count(n *node, lo, hi, now int64, rd *Readings) int64 {
	hi = min(hi, now)
	if lo > hi {
		return 0
	}
	first := n.retainedFrom(now, rd)
	from, to := max(n.lowerBound(lo), first), n.upperBound(hi)
	if from >= to {
		return 0
	}
	count := int64(to - from)
	if rd.CountRunning {
		return count
	}
	if now < n.watermark {
		// The node's clock went back: open no longer holds every event
		// that is not completed; scan the range.
		for i := from; i < to; i++ {
			if n.log[i].CompletedAt > now {
				count--
			}
		}
		return count
	}
	n.runningAt(now) // prunes open to the events not completed by now
	lowest := logKey{n.log[from].Date, n.log[from].Seq}
	for _, ev := range n.open {
		if ev.Date >= lo && ev.Date <= hi && ev.CompletedAt > now && !(logKey{ev.Date, ev.Seq}).less(lowest) {
			count--
		}
	}
	return count
}

// dateHeader is the console's clock as an HTTP Date header shows it: whole
// seconds. ok is false with Readings.NoDate.
func (s *Simulator) dateHeader(rd *Readings) (ms int64, ok bool) {
	if rd.NoDate {
		return 0, false
	}
	return s.clock.Now().Unix() * 1000, true
}

var scratchPool = sync.Pool{New: func() any { e := make([]Event, 0, 256); return &e }}

func (s *Simulator) serveListing(w http.ResponseWriter, r *http.Request, n *node, q listingQuery) {
	rd := s.readings()
	bp := bufPool.Get().(*[]byte)
	sp := scratchPool.Get().(*[]Event)
	now := s.lockNode(n)
	reqs, runnings, last := s.answer(n, q, now, rd, *sp)
	n.mu.Unlock()
	body := appendListing((*bp)[:0], reqs, runnings, last, rd.Runnings != RunningsAbsent, s.cfg.Pretty)
	*sp = reqs[:0]
	scratchPool.Put(sp)
	s.writeJSON(w, r, http.StatusOK, body)
	*bp = body[:0]
	bufPool.Put(bp)
}

// serveCount answers a bare JSON number (see count).
func (s *Simulator) serveCount(w http.ResponseWriter, r *http.Request, n *node, start, end int64) {
	rd := s.readings()
	lo, hi := rd.inclusive(start, end)
	now := s.lockNode(n)
	count := s.count(n, lo, hi, now, rd)
	n.mu.Unlock()
	s.writeJSON(w, r, http.StatusOK, strconv.AppendInt(nil, count, 10))
}
