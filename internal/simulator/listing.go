package simulator

import (
	"net/http"
	"strconv"
	"sync"
)

// listingQuery selects the reqs of a listing: events with lo <= date <= hi
// that have completed by the node's now. limit caps them (0 with !limited:
// no cap); desc walks from the newest.
type listingQuery struct {
	lo, hi  int64
	limit   int
	limited bool // asc/desc: limit 0 means no events at all
	desc    bool
}

// collect returns the reqs and runnings of q at the node's now. Runnings are
// every event running on the node at now, whatever the range: they are the
// node's current activity, not part of the history being listed. Caller
// holds n.mu.
func (n *node) collect(q listingQuery, now int64, scratch []Event) (reqs, runnings []Event) {
	hi := min(q.hi, now)
	capped := q.limited || q.limit > 0
	reqs = scratch[:0]
	if q.lo <= hi && !(capped && q.limit == 0) {
		from, to := n.lowerBound(q.lo), n.upperBound(hi)
		if !q.desc {
			for i := from; i < to; i++ {
				if n.log[i].CompletedAt <= now {
					reqs = append(reqs, n.log[i])
					if capped && len(reqs) >= q.limit {
						break
					}
				}
			}
		} else {
			for i := to - 1; i >= from; i-- {
				if n.log[i].CompletedAt <= now {
					reqs = append(reqs, n.log[i])
					if capped && len(reqs) >= q.limit {
						break
					}
				}
			}
		}
	}
	return reqs, n.runningAt(now)
}

// answer computes node n's listing for q at the node's now: its reqs, its
// runnings (none with CompletedOnly) and its `last` (the node's now, or the
// console's clock with ConsoleClockLast). Day and lastevents listings are
// newest first with NewestFirst (their cap then keeps the newest). Caller
// holds n.mu.
func (s *Simulator) answer(n *node, q listingQuery, now int64, scratch []Event) (reqs, runnings []Event, last int64) {
	if !q.limited && s.cfg.NewestFirst {
		q.desc = true
	}
	reqs, runnings = n.collect(q, now, scratch)
	if s.cfg.CompletedOnly {
		runnings = nil
	}
	last = now
	if s.cfg.ConsoleClockLast {
		last = s.clock.Now().UnixMilli()
	}
	return reqs, runnings, last
}

// count is the answer of event/count: the completed events with
// start <= date <= end at the node's now (and the running ones with
// CountRunning). The events in range are two binary searches; those not yet
// completed are among the few still open (runningAt keeps them), so a count
// over a long window costs no scan of it. Caller holds n.mu.
func (s *Simulator) count(n *node, lo, hi, now int64) int64 {
	hi = min(hi, now)
	if lo > hi {
		return 0
	}
	count := int64(n.upperBound(hi) - n.lowerBound(lo))
	if s.cfg.CountRunning {
		return count
	}
	if now < n.watermark {
		// The node's clock went back: open no longer holds every event
		// that is not completed; scan the range.
		for i, to := n.lowerBound(lo), n.upperBound(hi); i < to; i++ {
			if n.log[i].CompletedAt > now {
				count--
			}
		}
		return count
	}
	n.runningAt(now) // prunes open to the events not completed by now
	for _, ev := range n.open {
		if ev.Date >= lo && ev.Date <= hi && ev.CompletedAt > now {
			count--
		}
	}
	return count
}

var scratchPool = sync.Pool{New: func() any { e := make([]Event, 0, 256); return &e }}

func (s *Simulator) serveListing(w http.ResponseWriter, r *http.Request, n *node, q listingQuery) {
	bp := bufPool.Get().(*[]byte)
	sp := scratchPool.Get().(*[]Event)
	now := s.lockNode(n)
	reqs, runnings, last := s.answer(n, q, now, *sp)
	n.mu.Unlock()
	body := appendListing((*bp)[:0], reqs, runnings, last, s.cfg.Pretty)
	*sp = reqs[:0]
	scratchPool.Put(sp)
	s.writeJSON(w, r, http.StatusOK, body)
	*bp = body[:0]
	bufPool.Put(bp)
}

// serveCount answers a bare JSON number (see count).
func (s *Simulator) serveCount(w http.ResponseWriter, r *http.Request, n *node, lo, hi int64) {
	now := s.lockNode(n)
	count := s.count(n, lo, hi, now)
	n.mu.Unlock()
	s.writeJSON(w, r, http.StatusOK, strconv.AppendInt(nil, count, 10))
}
