package collector

import (
	"context"
	"fmt"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
)

// poller runs one poll of one node's events. It never touches the node's
// committed state: it works on a clone and returns it, and the caller swaps
// it in only when the whole poll succeeded.
type poller struct {
	api    nodeAPI
	node   apiclient.Node
	lim    limits
	logger log.Logger
}

// errNoLast is returned when a listing lacks `last`: without it the cursor
// cannot move and the interval cannot be checked.
type errNoLast struct{ endpoint, node string }

func (e errNoLast) Error() string {
	return fmt.Sprintf("malformed answer: endpoint %s node %s: listing has no \"last\" field", e.endpoint, e.node)
}

// poll returns the node state after one poll, or an error and no state (the
// caller keeps the old one: nothing of a failed poll is applied).
func (p *poller) poll(ctx context.Context, old *nodeState) (*nodeState, error) {
	st := old.clone()
	if !st.Contacted {
		return p.firstContact(ctx, st)
	}
	next, err := p.incremental(ctx, st, false)
	if err != nil && apiclient.IsBodyTooLarge(err) {
		// The listing since the cursor is over the body limit (a busy node
		// after a long outage). Retrying it would fail forever: read the
		// interval in pages instead, from a clean copy of the state.
		level.Warn(p.logger).Log("msg", "listing since the cursor too large; reading it in pages", "cursor", old.Cursor, "err", err)
		return p.incremental(ctx, old.clone(), true)
	}
	return next, err
}

// catchUpHorizon bounds the one-event listing that learns the node's `last`
// when the listing since the cursor is too large to read at once.
const catchUpHorizon int64 = 7 * 24 * 3600 * 1000 // ms

// discardEvents is a ListingHandler that keeps nothing: the paged catch-up
// only needs the `last` of its first listing.
type discardEvents struct{}

func (discardEvents) Event(apiclient.Event) error   { return nil }
func (discardEvents) Running(apiclient.Event) error { return nil }

// firstContact reads the day's listing to learn the node's present state
// (cluster state, indexes, tables, running events, fingerprints near the
// end) without counting anything: counters start at this point.
func (p *poller) firstContact(ctx context.Context, st *nodeState) (*nodeState, error) {
	s := newSink(p, st, false, 0)
	info, err := p.api.StreamListing(ctx, p.node, apiclient.Today(), s)
	if err != nil {
		return nil, err
	}
	st.Seen.endResponse()
	if !info.HasLast {
		return nil, errNoLast{apiclient.EndpointEvents, p.node.String()}
	}
	s.commitRunnings()
	st.Contacted = true
	st.Cursor = info.Last
	if st.Events == nil {
		st.Events = map[string]uint64{}
	}
	for _, t := range knownTypes {
		st.Events[t] += 0
	}
	st.Seen.raiseFloor(st.Cursor - seenRetention)
	level.Info(p.logger).Log("msg", "first contact: baseline taken, counting starts now", "cursor", st.Cursor,
		"events_in_day_listing", info.Reqs, "running", info.Runnings)
	return st, nil
}

// incremental reads what happened since the cursor, checks it against
// event/count, pages when the listing fell short, and looks up running
// events that vanished. With paged, the listing since the cursor is not
// read (it is too large): a one-event listing gives `last`, and every event
// of the interval comes from the pages (bounded per poll, resumed by the
// next poll); running events are left to the next ordinary poll.
func (p *poller) incremental(ctx context.Context, st *nodeState, paged bool) (*nodeState, error) {
	c := st.Cursor
	// The count interval [c, last] includes the cursor's millisecond, so
	// that an event dated c that arrived after the previous poll is still
	// revealed by event/count (a console whose lastevents is exclusive would
	// not list it). The events dated c known before this poll were reported
	// by the previous interval already: they are not reported again.
	reportedAtCursor := st.Seen.countAt(c)
	s := newSink(p, st, true, c)
	var info apiclient.ListingInfo
	var err error
	if paged {
		info, err = p.api.StreamListing(ctx, p.node, apiclient.Range(apiclient.Desc, c, c+catchUpHorizon, 1), discardEvents{})
	} else {
		info, err = p.api.StreamListing(ctx, p.node, apiclient.Since(c), s)
	}
	if err != nil {
		return nil, err
	}
	st.Seen.endResponse()
	if !info.HasLast {
		return nil, errNoLast{apiclient.EndpointLastEvents, p.node.String()}
	}
	if !paged {
		s.commitRunnings()
	}
	if s.overflow {
		level.Warn(p.logger).Log("msg", "more running events than can be tracked; some may not be counted when they complete", "bound", pendingCap)
	}
	last, complete := info.Last, true
	var reported int64
	if last < c {
		// Node restarted or its clock stepped back: follow it. The seen set
		// (kept whole, its floor does not go down) prevents any replay.
		level.Warn(p.logger).Log("msg", "last went backwards; cursor reset", "cursor", c, "last", last)
		// Remember how far the node's clock had gone: events completed by
		// then were counted (or were before the baseline), and the node
		// lists some of them as running again while its clock catches up.
		st.Rewound = max(st.Rewound, c)
		st.ResumeAt = 0
	} else {
		n, err := p.api.EventCount(ctx, p.node, c, last)
		if err != nil {
			return nil, err
		}
		// Added only once the interval is read whole: a poll cut by the
		// page bound counts the same interval again on the next poll.
		reported = max(0, n-reportedAtCursor)
		have, known := s.inRange(last)
		if paged || !known || n > int64(have) {
			from := c
			if st.ResumeAt > c && st.ResumeAt <= last {
				from = st.ResumeAt
			}
			var next int64
			complete, next, err = p.page(ctx, st, from, last)
			if err != nil {
				return nil, err
			}
			st.ResumeAt = 0
			if !complete {
				st.ResumeAt = next
			}
		}
	}
	if !paged {
		if err := p.lookupVanished(ctx, st, s.runningKeys); err != nil {
			return nil, err
		}
	}
	if complete {
		st.Reported += uint64(reported)
		st.ResumeAt = 0
		st.Cursor = last
		st.Seen.raiseFloor(st.Cursor - seenRetention)
	}
	return st, nil
}

// observe handles one completed event of any response: it decides whether it
// is new (not counted before), applies its gauges, and counts it if new.
func (p *poller) observe(st *nodeState, e apiclient.Event, counting bool) bool {
	resolved := st.resolvePending(e)
	isNew := false
	if e.Date >= st.Seen.Floor {
		isNew = st.Seen.observe(fingerprint(e), e.Date)
	} else {
		// Too old to be told apart: counted before, unless it is a running
		// event we were waiting for, and not one seen running again only
		// because the node's clock went back over it.
		isNew = resolved && !st.completedBeforeRewind(e)
	}
	isNew = isNew && counting
	st.applyGauges(e, p.lim, isNew)
	if isNew {
		st.countEvent(e, p.lim)
	}
	return isNew
}
