package collector

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// nodeRuntime is one configured node: its committed state, its caches and
// the poll in flight, if any.
type nodeRuntime struct {
	cluster string
	name    string
	target  apiclient.Node
	labels  []string         // values of the node labels: [cluster,] node
	pairs   []*dto.LabelPair // the same as label pairs, shared by the node's series
	d       *descs

	mu       sync.Mutex
	api      nodeAPI
	state    *tracker.State // committed; never modified once committed (polls clone it)
	caches   map[string]any // by refresher name; values are replaced, never modified
	inflight *pollCall
	lastPoll time.Duration
	// misses counts the polls in a row cut by the scrape's deadline;
	// failures counts failed polls by reason (failureReasons); partials
	// counts the polls in a row that failed after their count and listing.
	misses   int
	failures map[string]uint64
	partials int
	// recent holds the node's latest polls, for the status page.
	recent pollRing
}

// pollCall is a poll shared by every scrape that arrives while it runs.
type pollCall struct {
	done chan struct{}
	res  pollResult
}

// pollResult is what one poll of a node tells a scrape.
type pollResult struct {
	err             error            // event poll error: node down for this scrape
	reason          string           // of err, one of failureReasons ("" without error)
	consoleAnswered bool             // the console itself answered
	refreshErr      map[string]error // by refresher name
}

// nodeView is what a sub-collector sees of a node during a scrape.
type nodeView struct {
	d      *descs
	labels []string
	pairs  []*dto.LabelPair
	st     *tracker.State
	caches map[string]any
	res    pollResult
	// lateWindow is the engine's late window (for its gauge).
	lateWindow time.Duration
	// created is the counters' created timestamp: when counting began for
	// the node (nil when not known).
	created *timestamppb.Timestamp
}

// pollShared polls the node within the scrape's deadline (ctx), or waits
// for the poll already in flight and returns its result: two scrapes (two
// Prometheus servers in HA) never poll a node twice at once, so they cannot
// count the same events twice. A scrape that joins a poll stops waiting at
// its own deadline (the node is then down for it); the poll goes on for the
// scrape that started it.
func (n *nodeRuntime) pollShared(ctx context.Context, e *Exporter) pollResult {
	n.mu.Lock()
	if c := n.inflight; c != nil {
		n.mu.Unlock()
		select {
		case <-c.done:
			return c.res
		case <-ctx.Done():
			return pollResult{err: ctx.Err(), consoleAnswered: true, reason: reasonDeadline}
		}
	}
	c := &pollCall{done: make(chan struct{})}
	n.inflight = c
	api, old, caches, misses, partials := n.api, n.state, n.caches, n.misses, n.partials
	n.mu.Unlock()

	start := time.Now()
	pctx, cancel := n.pollBudget(ctx, misses)
	defer cancel()
	select {
	case e.sem <- struct{}{}:
	case <-pctx.Done():
		res := pollResult{err: pctx.Err(), consoleAnswered: true, reason: reasonDeadline}
		dur := time.Since(start)
		n.finish(c, nil, caches, res, dur, pollRecord(start, dur, tracker.Report{}, false, false, res))
		return res
	}
	logger := log.With(e.logger, "node", n.name)
	if t := n.target.String(); t != n.name {
		logger = log.With(logger, "target", t)
	}
	if n.cluster != "" {
		logger = log.With(logger, "cluster", n.cluster)
	}
	opts := e.engine
	opts.Logger = logger
	st, rep, err := tracker.Poll(pctx, nodeConsole{api: api, node: n.target}, old, opts)
	res := pollResult{err: err, consoleAnswered: consoleAnswered(err)}
	if err != nil {
		res.reason = failureReason(pctx, err)
	}
	newCaches := caches
	if res.reason == reasonDeadline {
		res.consoleAnswered = true
	}
	switch {
	case err == nil:
		newCaches, res.refreshErr = e.refresh(pctx, api, n, st, caches, logger)
	case res.reason == reasonDeadline && (st == nil || partials < partialsBeforeKeep):
		// Cut by the scrape's deadline: the node is down for this scrape, the
		// others are served on time; nothing of the poll is applied, the
		// cursor stays where it was.
		st = nil
		level.Warn(logger).Log("msg", "event poll cut by the scrape's deadline; the node is down for this scrape, nothing of the poll applied",
			"budget", budgetOf(pctx, start), "err", err)
	case st != nil && partials < partialsBeforeKeep:
		// The count and the listing were read, a later call failed (a page
		// of a search): nothing of the poll is applied, the next one reads
		// the same events again.
		st = nil
		level.Warn(logger).Log("msg", "event poll failed mid-way; nothing of it applied, cursor unchanged", "err", err)
	case st != nil:
		// The same again, several polls in a row: a console that fails a
		// call now and then, and a search too long to get through between
		// two failures. What was read whole is kept (each page applies all
		// or nothing), so that the node catches up.
		level.Warn(logger).Log("msg", "event poll failed mid-way again; what was read whole is kept so that the node catches up",
			"failed_in_a_row", partials+1, "err", err)
	default:
		level.Warn(logger).Log("msg", "event poll failed; nothing of it applied, cursor unchanged", "err", err)
	}
	if rep.Searched {
		level.Debug(logger).Log("msg", "looked for events the count says are missing", "deficit", rep.Deficit,
			"calls", rep.Calls, "counted", rep.Counted, "incomplete", rep.Incomplete)
	}
	dur := time.Since(start)
	<-e.sem
	n.finish(c, st, newCaches, res, dur, pollRecord(start, dur, rep, !old.Contacted && st != nil, st != nil, res))
	return res
}

// finish commits a poll's outcome, records it for the status page and
// wakes the scrapes that share it.
func (n *nodeRuntime) finish(c *pollCall, st *tracker.State, caches map[string]any, res pollResult, dur time.Duration, rec PollRecord) {
	n.mu.Lock()
	n.recent.add(rec)
	if st != nil {
		n.state = st
		n.caches = caches
	}
	switch {
	case res.err == nil || st != nil:
		n.partials = 0
	case errors.As(res.err, new(*tracker.PartialError)):
		n.partials++
	}
	switch {
	case res.reason == reasonDeadline:
		n.misses++
	case res.err == nil:
		n.misses = 0
	}
	if res.reason != "" {
		if n.failures == nil {
			n.failures = map[string]uint64{}
		}
		n.failures[res.reason]++
	}
	n.lastPoll = dur
	c.res = res
	n.inflight = nil
	n.mu.Unlock()
	close(c.done)
}

// budgetOf is the time a poll had: from its start to its deadline.
func budgetOf(ctx context.Context, start time.Time) time.Duration {
	d, ok := ctx.Deadline()
	if !ok {
		return 0
	}
	return d.Sub(start).Round(time.Millisecond)
}

// view returns the node's committed state for emission.
func (n *nodeRuntime) view(res pollResult, window time.Duration) *nodeView {
	n.mu.Lock()
	defer n.mu.Unlock()
	v := &nodeView{d: n.d, labels: n.labels, pairs: n.pairs, st: n.state, caches: n.caches, res: res, lateWindow: window}
	if n.state.Since > 0 {
		v.created = timestamppb.New(time.UnixMilli(n.state.Since))
	}
	return v
}

// consoleAnswered tells whether err still proves the console answered:
// only an unreachable console or refused credentials say it did not.
func consoleAnswered(err error) bool {
	var ae *apiclient.Error
	if err == nil || !errors.As(err, &ae) {
		return true
	}
	return ae.Kind != apiclient.KindConsoleUnreachable && ae.Kind != apiclient.KindBadCredentials
}
