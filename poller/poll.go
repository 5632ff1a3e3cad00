package poller

import (
	"context"
	"sync"
)

// Poll polls nodes concurrently (bounded by Options.Concurrency, shared
// with the polls other scrapes started) within the scrape's deadline (ctx)
// and returns their results in the order of nodes. A node whose poll the
// deadline cut is down for this scrape; the others are done on time. want
// is the info calls a poll makes after a successful event poll.
func (p *Poller) Poll(ctx context.Context, nodes []*NodeRuntime, want InfoCalls) []Result {
	return p.PollEach(ctx, nodes, want, nil)
}

// PollEach is Poll, and calls done(i, result) for node i as soon as its
// poll has ended, in the goroutine that polled it, out of the concurrency
// bound: what a scrape does with a node's outcome (encoding its series)
// then overlaps with the polls of the others. done may be nil; it is
// called for every node before PollEach returns.
func (p *Poller) PollEach(ctx context.Context, nodes []*NodeRuntime, want InfoCalls, done func(i int, res Result)) []Result {
	out := make([]Result, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = n.poll(ctx, want)
			if done != nil {
				done(i, out[i])
			}
		}()
	}
	wg.Wait()
	return out
}
