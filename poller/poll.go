package poller

import (
	"context"
	"sync"
)

// PollNodes polls nodes concurrently (bounded by Options.Concurrency, shared
// with the polls other scrapes started) within the scrape's deadline (ctx)
// and returns their results in the order of nodes. A node whose poll the
// deadline cut is down for this scrape; the others are done on time. want
// is the info calls a poll makes after a successful event poll.
func (p *Poller) PollNodes(ctx context.Context, nodes []*NodeRuntime, want InfoCalls) []Result {
	out := make([]Result, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = n.poll(ctx, want)
		}()
	}
	wg.Wait()
	return out
}
