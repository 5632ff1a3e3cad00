package tracker

import (
	"context"

	"github.com/go-kit/log/level"

	"github.com/indexima-exporter/indexima_exporter/event"
	"github.com/indexima-exporter/indexima_exporter/tally"
)

// relearnNodeDown learns the dates of the node's latest NODE_DOWN reports
// again (NodeDownLast), for a restored state that lacks them
// (RelearnNodeDown: a state of an earlier schema, or whose dates Repair
// dropped). Without them, an open IndeximaNodeDownReported alert would
// resolve at the restart, and come back only if a listing happened to
// reach the report. It reads back as first contact does (firstcontact.go),
// with the same bounds: event/desc pages from past the console's clock
// back until the latest cluster reset has been met and the late window is
// covered, at most Options.LookBack back and LookBackCalls calls; nothing
// is counted and nothing else of the state changes, so it runs after the
// poll's own work. It runs once: cut by the scrape's deadline after its
// first page, what was read stands (as first contact's look-back); a call
// that fails otherwise leaves it to the next poll, whose own work is not
// held back either.
func (p *pollRun) relearnNodeDown(ctx context.Context, st *State) {
	now, ok, err := p.con.Clock(ctx)
	if err != nil {
		level.Warn(p.o.Logger).Log("msg", "node-down reports not learned again yet; the next poll tries again", "err", err)
		return
	}
	if !ok {
		now = max(st.ClockAt, st.Cursor)
	}
	lbFrom, end := now-p.o.LookBack.Milliseconds(), max(now, st.Cursor)+lookaheadMS
	limit := lookBackLimit
	h := relearnHandler{p: p, st: st}
	calls, pages := 0, 0
	for ; calls < p.o.LookBackCalls; calls++ {
		h.reqs = 0
		if _, err := p.con.List(ctx, event.Range(event.Desc, lbFrom, end, limit), &h); err != nil {
			if ctx.Err() == nil || pages == 0 {
				// (What was read is kept: the date decides.)
				level.Warn(p.o.Logger).Log("msg", "node-down reports not learned again yet; the next poll tries again", "pages", pages, "err", err)
				return
			}
			level.Warn(p.o.Logger).Log("msg", "look-back for node-down reports cut by the scrape's deadline; what was read stands", "pages", pages, "err", err)
			break
		}
		pages++
		if h.reqs == 0 {
			break
		}
		switch {
		case h.minDate < end:
			end = h.minDate
		case h.reqs >= limit && limit < maxPageLimit:
			limit = min(2*limit, maxPageLimit)
		default:
			// One millisecond alone filled the page: on from before it.
			end = h.minDate - 1
		}
		if end < lbFrom || h.minDate < st.Floor && h.resetSeen {
			break
		}
	}
	st.RelearnNodeDown = false
	level.Info(p.o.Logger).Log("msg", "node-down reports learned again by a look-back (a state saved without them)",
		"reports", h.reports, "down_nodes", len(st.NodeDownLast), "calls", calls)
}

// relearnHandler takes the events of relearnNodeDown's pages: the
// NODE_DOWN reports, named as the engine names them now, and whether a
// cluster reset was met (older events tell nothing more of the present).
type relearnHandler struct {
	p         *pollRun
	st        *State
	reqs      int   // events of the current page
	minDate   int64 // oldest date of the current page
	reports   int
	resetSeen bool
}

func (h *relearnHandler) Event(e event.Event) error {
	if h.reqs == 0 || e.Date < h.minDate {
		h.minDate = e.Date
	}
	h.reqs++
	if tally.ResetsState(e.Type) {
		h.resetSeen = true
	}
	if e.Type == "NODE_DOWN" {
		h.reports++
		h.st.NoteNodeDown(nameDownNode(h.p.o.DownNodeName, tally.DownNodeKey(e.Comment)), e.Date, h.p.o.Limits)
	}
	return nil
}

// Running events are not reports yet: they are counted, and learned, when
// they complete.
func (h *relearnHandler) Running(event.Event) error { return nil }
