package program

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
	"github.com/indexima-exporter/indexima_exporter/config"
	"github.com/indexima-exporter/indexima_exporter/internal/clip"
	"github.com/indexima-exporter/indexima_exporter/poller"
)

// connectWorkers bounds the nodes of a cluster called at once by
// --config.check.connect; each call is bounded by the console's timeout.
const connectWorkers = 16

// connectCheck is the second half of --config.check.connect: through each
// cluster's console client (the exporter's own, so the same login, headers
// and TLS), one event/count call per node, the first of which logs in. A
// summary per console on stdout; on stderr one line per failure: the
// console's (unreachable, credentials refused), after which its other nodes
// are not called, or each node's (unknown to the console, unreachable).
// clusters are cfg.Clusters built, in the same order.
func connectCheck(ctx context.Context, cfg *config.Config, clusters []poller.Cluster, stdout, stderr io.Writer) int {
	code := exitOK
	for i, c := range clusters {
		console := cfg.Clusters[i].Console
		where := fmt.Sprintf("console %s", console.URL)
		if c.Name != "" {
			where = fmt.Sprintf("cluster %s: %s", c.Name, where)
		}
		errs := callNodes(ctx, c)
		if len(errs) > 0 && errs[0] != nil && isLoginError(errs[0]) {
			err := errs[0]
			notCalled := ""
			if n := len(c.Nodes) - 1; n > 0 {
				notCalled = fmt.Sprintf(" (%d other node(s) not called)", n)
			}
			fail(stderr, exitError, "%s: %s%s", where, failureText(err, console.Username), notCalled)
			code = exitError
			continue
		}
		answered := 0
		for j, err := range errs {
			if err == nil {
				answered++
				continue
			}
			n := c.Nodes[j]
			fail(stderr, exitError, "%s: node %s (%s): %s", where, n.Name, n.Target, failureText(err, console.Username))
			code = exitError
		}
		login := fmt.Sprintf("logged in as %q", console.Username)
		if console.Username == "" {
			login = "no login (no username configured)"
		}
		fmt.Fprintf(stdout, "%s: %s: %s; %d of %d node(s) answered event/count\n", Name, where, login, answered, len(c.Nodes))
	}
	return code
}

// callNodes calls event/count on each node of c, over the last hour: the
// first node alone (its call logs in; a refused login then fails every other
// call alike and stops there), the others at most connectWorkers at once.
// The errors are in the order of c.Nodes.
func callNodes(ctx context.Context, c poller.Cluster) []error {
	errs := make([]error, len(c.Nodes))
	if len(c.Nodes) == 0 { // config refuses a cluster without nodes
		return errs
	}
	now := time.Now()
	call := func(j int) {
		_, errs[j] = c.Client.EventCount(ctx, c.Nodes[j].Target, now.Add(-time.Hour).UnixMilli(), now.UnixMilli())
	}
	call(0)
	if errs[0] != nil && isLoginError(errs[0]) {
		return errs
	}
	var wg sync.WaitGroup
	slots := make(chan struct{}, connectWorkers)
	for j := 1; j < len(c.Nodes); j++ {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			call(j)
		}()
	}
	wg.Wait()
	return errs
}

// failureText says a failed call of the check in a few words: what failed
// (the error's kind), at which call and status, and why. The client's
// error, written for the logs, also names the endpoint and node again,
// quotes the body and repeats a refusal at each layer it crossed (a wrong
// password said "refused" three times in a line of 300 characters).
func failureText(err error, username string) string {
	var e *apiclient.Error
	if !errors.As(err, &e) {
		return err.Error()
	}
	status := ""
	if e.Status != 0 {
		status = fmt.Sprintf(" (status %d)", e.Status)
	}
	if e.Kind == apiclient.KindBadCredentials && e.Endpoint == apiclient.EndpointLogin {
		return fmt.Sprintf("bad credentials: the console refused user %q at login%s: check the user name and the password", username, status)
	}
	s := fmt.Sprintf("%s at %s%s", e.Kind, e.Endpoint, status)
	if e.Err == nil {
		return s
	}
	why := e.Err.Error()
	// The console's own words after the client's explanation of a 5xx,
	// which the kind says already ("the console could not get an answer
	// from the node: Cannot reach node ..."): they alone, quoted.
	unreachable := e.Kind == apiclient.KindNodeUnreachable || e.Kind == apiclient.KindConsoleUnreachable
	if base := errors.Unwrap(e.Err); base != nil && unreachable {
		if words, ok := strings.CutPrefix(why, base.Error()+": "); ok {
			return s + ": " + strconv.Quote(words)
		}
	}
	// A network error after the client's explanation ("connection refused
	// by the console (is the URL right ...?): dial tcp ...: connection
	// refused"): its last words, only if the explanation lacks them.
	var oe *net.OpError
	if errors.As(e.Err, &oe) {
		cause := oe.Err.Error()
		for u := errors.Unwrap(oe.Err); u != nil; u = errors.Unwrap(u) {
			cause = u.Error()
		}
		head := strings.TrimSuffix(why, ": "+oe.Error())
		if head != why && strings.Contains(head, cause) {
			why = head
		}
	}
	s += ": " + why
	if e.Kind == apiclient.KindMalformed && e.Excerpt != "" {
		s += " (body: " + truncateText(e.Excerpt, 80) + ")"
	}
	return s
}

// truncateText cuts s to at most n bytes, at a rune boundary, with "...".
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return clip.Prefix(s, n) + "..."
}

// isLoginError tells a failure of the login (the console's, not a node's).
func isLoginError(err error) bool {
	var e *apiclient.Error
	return errors.As(err, &e) && e.Endpoint == apiclient.EndpointLogin
}
