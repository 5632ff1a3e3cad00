package poller

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

// Reasons of a failed poll, a fixed vocabulary (the values of the reason
// label of indexima_exporter_node_poll_failures_total).
const (
	ReasonDeadline    = "deadline"            // the scrape's deadline came first
	ReasonConsole     = "console_unreachable" // no answer from the console
	ReasonCredentials = "bad_credentials"     // the console refused the login
	ReasonNode        = "node_unreachable"    // the console could not reach the node
	ReasonMalformed   = "malformed"           // an answer that is not the API's
	ReasonRefused     = "refused"             // a call the console refused
	ReasonOther       = "other"
)

// FailureReasons are the reasons, in a fixed order.
var FailureReasons = []string{ReasonDeadline, ReasonConsole, ReasonCredentials, ReasonNode, ReasonMalformed, ReasonRefused, ReasonOther}

// failureReason classifies a poll's error; ctx is the scrape's, so that a
// call cut by the scrape's deadline is told from a console that timed out.
func failureReason(ctx context.Context, err error) string {
	if ctx.Err() != nil {
		return ReasonDeadline
	}
	var ae *apiclient.Error
	if !errors.As(err, &ae) {
		return ReasonOther
	}
	switch ae.Kind {
	case apiclient.KindConsoleUnreachable:
		return ReasonConsole
	case apiclient.KindBadCredentials:
		return ReasonCredentials
	case apiclient.KindNodeUnreachable:
		return ReasonNode
	case apiclient.KindMalformed:
		return ReasonMalformed
	case apiclient.KindRefused:
		return ReasonRefused
	}
	return ReasonOther
}

// pollBudget is the context of one node's poll within a scrape: the
// scrape's own, or a short one for a node that kept missing the deadline.
func pollBudget(ctx context.Context, misses int) (context.Context, context.CancelFunc) {
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
