package program

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
	"github.com/indexima-exporter/indexima_exporter/config"
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
			fail(stderr, exitError, "%s: %v%s", where, err, notCalled)
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
			fail(stderr, exitError, "%s: node %s (%s): %v", where, n.Name, n.Target, err)
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

// isLoginError tells a failure of the login (the console's, not a node's).
func isLoginError(err error) bool {
	var e *apiclient.Error
	return errors.As(err, &e) && e.Endpoint == apiclient.EndpointLogin
}
