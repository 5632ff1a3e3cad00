package poller

import (
	"context"
	"errors"
	"maps"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// NodeRuntime is one configured node: its committed state, its info
// caches and the poll in flight, if any.
type NodeRuntime struct {
	p       *Poller
	cluster string
	target  apiclient.Node

	mu       sync.Mutex
	name     string
	api      nodeAPI
	downName tracker.DownNodeNamer // the engine's DownNodeName: its cluster's numbers
	state    *tracker.State        // committed; never modified once committed (polls clone it)
	info     Info                  // replaced, never modified
	inflight *pollCall
	lastPoll time.Duration
	// misses counts the polls in a row cut by the scrape's deadline;
	// failures counts failed polls by reason (FailureReasons); partials
	// counts the polls in a row that failed after their count and listing.
	misses   int
	failures map[string]uint64
	partials int
	// recent holds the node's latest polls, for the status page; events
	// its latest counted events, for the status page and /events.
	recent pollRing
	events eventRing
	// logger is the node's logger (its labels bound), made for loggerOf.
	logger   log.Logger
	loggerOf string
}

// pollCall is a poll shared by every scrape that arrives while it runs.
type pollCall struct {
	done chan struct{}
	res  Result
}

// Result is what one poll of a node tells a scrape.
type Result struct {
	Err             error  // event poll error: node down for this scrape
	Reason          string // of Err, one of FailureReasons ("" without error)
	ConsoleAnswered bool   // the console itself answered
	// VersionErr and ColumnsErr are the info calls' errors; they do not
	// mark the node down.
	VersionErr, ColumnsErr error
}

// Committed is a node's committed outcome, as its latest polls left it.
type Committed struct {
	State    *tracker.State // shared: never modified once committed
	Info     Info
	LastPoll time.Duration     // duration of the latest poll
	Failures map[string]uint64 // failed polls by reason; a copy
}

// Name is the node's configured name (the node label's value).
func (n *NodeRuntime) Name() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.name
}

// Committed returns the node's committed state and what its polls recorded.
func (n *NodeRuntime) Committed() Committed {
	n.mu.Lock()
	defer n.mu.Unlock()
	return Committed{State: n.state, Info: n.info, LastPoll: n.lastPoll, Failures: maps.Clone(n.failures)}
}

// nodeLogger returns the node's logger, made once per name (a reload may
// rename the node) rather than at every poll. n.mu must be held.
func (n *NodeRuntime) nodeLogger() log.Logger {
	if n.logger != nil && n.loggerOf == n.name {
		return n.logger
	}
	logger := log.With(n.p.logger, "node", n.name)
	if t := n.target.String(); t != n.name {
		logger = log.With(logger, "target", t)
	}
	if n.cluster != "" {
		logger = log.With(logger, "cluster", n.cluster)
	}
	n.logger, n.loggerOf = logger, n.name
	return logger
}

// poll polls the node within the scrape's deadline (ctx), or waits for the
// poll already in flight and returns its result: two scrapes (two
// Prometheus servers in HA) never poll a node twice at once, so they cannot
// count the same events twice. A scrape that joins a poll stops waiting at
// its own deadline (the node is then down for it); the poll goes on for the
// scrape that started it. want is the info calls of the poll the scrape
// starts (a joined poll makes those of the scrape that started it).
func (n *NodeRuntime) poll(ctx context.Context, want InfoCalls) Result {
	n.mu.Lock()
	if c := n.inflight; c != nil {
		n.mu.Unlock()
		select {
		case <-c.done:
			return c.res
		case <-ctx.Done():
			return Result{Err: ctx.Err(), ConsoleAnswered: true, Reason: ReasonDeadline}
		}
	}
	c := &pollCall{done: make(chan struct{})}
	n.inflight = c
	api, old, info, misses, partials, downName := n.api, n.state, n.info, n.misses, n.partials, n.downName
	ref := NodeRef{Cluster: n.cluster, Name: n.name, Target: n.target.String()}
	logger := n.nodeLogger()
	n.mu.Unlock()

	p := n.p
	start := time.Now()
	pctx, cancel := pollBudget(ctx, misses)
	defer cancel()
	select {
	case p.sem <- struct{}{}:
	case <-pctx.Done():
		res := Result{Err: pctx.Err(), ConsoleAnswered: true, Reason: ReasonDeadline}
		dur := time.Since(start)
		n.finish(c, nil, info, nil, res, dur, pollRecord(start, dur, tracker.Report{}, false, false, res))
		return res
	}
	opts := p.engine
	opts.Logger, opts.DownNodeName = logger, downName
	st, rep, err := tracker.Poll(pctx, nodeConsole{api: api, node: n.target}, old, opts)
	res := Result{Err: err, ConsoleAnswered: consoleAnswered(err)}
	if err != nil {
		res.Reason = failureReason(pctx, err)
	}
	newInfo := info
	if res.Reason == ReasonDeadline {
		res.ConsoleAnswered = true
	}
	switch {
	case err == nil:
		newInfo = p.refresh(pctx, api, n.target, st, info, want, &res, logger)
	case res.Reason == ReasonDeadline && (st == nil || partials < partialsBeforeKeep):
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
	if st != nil && len(rep.Events) > 0 {
		inDateOrder(rep.Events)
		if w := p.opts.Events; w != nil {
			if serr := w.WriteEvents(ref, rep.Events); serr != nil {
				// Not committed: a state the store saves must not hold
				// events the log never got; the next poll counts them again.
				st = nil
				res = Result{Err: &errEventWriter{serr}, ConsoleAnswered: true, Reason: ReasonOther}
				level.Warn(logger).Log("msg", "event poll not applied: the event log cannot take its events; the next poll reads them again", "events", len(rep.Events), "err", serr)
			}
		}
	}
	if rep.Searched {
		level.Debug(logger).Log("msg", "looked for events the count says are missing", "deficit", rep.Deficit,
			"calls", rep.Calls, "counted", rep.EventsCounted, "incomplete", rep.Incomplete)
	}
	dur := time.Since(start)
	<-p.sem
	n.finish(c, st, newInfo, rep.Events, res, dur, pollRecord(start, dur, rep, !old.Contacted && st != nil, st != nil, res))
	return res
}

// finish commits a poll's outcome (its state and the events it counted, when
// st is set), records it for the status page and wakes the scrapes that
// share it.
func (n *NodeRuntime) finish(c *pollCall, st *tracker.State, info Info, evs []tracker.CountedEvent, res Result, dur time.Duration, rec PollRecord) {
	n.mu.Lock()
	n.recent.add(rec)
	if st != nil {
		n.state = st
		n.info = info
		n.events.add(evs)
	}
	switch {
	case res.Err == nil || st != nil:
		n.partials = 0
	case errors.As(res.Err, new(*tracker.PartialError)):
		n.partials++
	}
	switch {
	case res.Reason == ReasonDeadline:
		n.misses++
	case res.Err == nil:
		n.misses = 0
	}
	if res.Reason != "" {
		if n.failures == nil {
			n.failures = map[string]uint64{}
		}
		n.failures[res.Reason]++
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

// consoleAnswered tells whether err still proves the console answered:
// only an unreachable console or refused credentials say it did not.
func consoleAnswered(err error) bool {
	var ae *apiclient.Error
	if err == nil || !errors.As(err, &ae) {
		return true
	}
	return ae.Kind != apiclient.KindConsoleUnreachable && ae.Kind != apiclient.KindBadCredentials
}
