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
	return p.PollNodesEach(ctx, nodes, want, nil)
}

// PollNodesEach is PollNodes calling each (when not nil) with a node's
// index and result as soon as its poll ends, on the poll's goroutine, while
// the other nodes may still be polled: the node's committed outcome is
// then final for this scrape, and its series can be written while the
// slowest node is awaited. Calls of each run concurrently.
func (p *Poller) PollNodesEach(ctx context.Context, nodes []*NodeRuntime, want InfoCalls, each func(i int, r Result)) []Result {
	out := make([]Result, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = n.poll(ctx, want)
			if each != nil {
				each(i, out[i])
			}
		}()
	}
	wg.Wait()
	return out
}
