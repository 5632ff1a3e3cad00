package collector

import (
	"context"
	"errors"
	"time"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
)

// DefaultScrapeBudget bounds a scrape that did not say how long it may take
// (no X-Prometheus-Scrape-Timeout-Seconds header, or Collect called without
// a deadline): Prometheus' default scrape timeout, 10 s, minus the default
// offset (0.5 s) left to encode and send the answer.
const DefaultScrapeBudget = 9500 * time.Millisecond

// A node whose polls hit the scrape's deadline this many times in a row is
// polled with a short budget (a quarter of the scrape's, at least 1 s) until
// it answers again: one hanging node must not make every scrape of the
// cluster last its whole deadline.
const (
	slowAfterMisses = 3
	minShortBudget  = time.Second
)

// partialsBeforeKeep is how many polls in a row that failed after their
// count and listing apply nothing; the next one keeps what it read whole.
// A failed poll applies nothing, as a rule: only a node whose polls keep
// failing mid-way (a console that fails a call in ten, and a search of
// hundreds of calls) would otherwise never catch up.
const partialsBeforeKeep = 3

// Reasons of indexima_exporter_node_poll_failures_total: the labels of the
// counter, a fixed vocabulary.
const (
	reasonDeadline    = "deadline"            // the scrape's deadline came first
	reasonConsole     = "console_unreachable" // no answer from the console
	reasonCredentials = "bad_credentials"     // the console refused the login
	reasonNode        = "node_unreachable"    // the console could not reach the node
	reasonMalformed   = "malformed"           // an answer that is not the API's
	reasonRefused     = "refused"             // a call the console refused
	reasonOther       = "other"
)

var failureReasons = []string{reasonDeadline, reasonConsole, reasonCredentials, reasonNode, reasonMalformed, reasonRefused, reasonOther}

// failureReason classifies a poll's error; ctx is the scrape's, so that a
// call cut by the scrape's deadline is told from a console that timed out.
func failureReason(ctx context.Context, err error) string {
	if ctx.Err() != nil {
		return reasonDeadline
	}
	var ae *apiclient.Error
	if !errors.As(err, &ae) {
		return reasonOther
	}
	switch ae.Kind {
	case apiclient.KindConsoleUnreachable:
		return reasonConsole
	case apiclient.KindBadCredentials:
		return reasonCredentials
	case apiclient.KindNodeUnreachable:
		return reasonNode
	case apiclient.KindMalformed:
		return reasonMalformed
	case apiclient.KindRefused:
		return reasonRefused
	}
	return reasonOther
}

// pollBudget is the context of one node's poll within a scrape: the
// scrape's own, or a short one for a node that kept missing the deadline.
func (n *nodeRuntime) pollBudget(ctx context.Context, misses int) (context.Context, context.CancelFunc) {
	if misses < slowAfterMisses {
		return context.WithCancel(ctx)
	}
	d, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	short := max(time.Until(d)/4, minShortBudget)
	return context.WithTimeout(ctx, short)
}
