package poller

import (
	"context"
	"fmt"
	"time"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
	"github.com/indexima-exporter/indexima_exporter/event"
	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// nodeConsole is one node's console as the counting engine sees it: the
// API client's listings and count, for the node the headers name.
type nodeConsole struct {
	api  nodeAPI
	node apiclient.Node
}

var _ tracker.Console = nodeConsole{}

// List hands the engine's query and handler to the client as they are:
// both speak package event, so no event is copied on its way up.
func (c nodeConsole) List(ctx context.Context, q event.Query, h event.Handler) (tracker.ListingInfo, error) {
	info, err := c.api.StreamListing(ctx, c.node, q, h)
	if err != nil {
		if apiclient.IsBodyTooLarge(err) {
			return tracker.ListingInfo{}, fmt.Errorf("%w: %w", tracker.ErrTooLarge, err)
		}
		return tracker.ListingInfo{}, err
	}
	out := tracker.ListingInfo{Last: info.Last, HasLast: info.HasLast}
	if now, _, ok := c.api.ConsoleClock(); ok {
		out.Date, out.HasDate = now.UnixMilli(), true
	}
	return out, nil
}

// clockFresh is how old the console's latest answer may be for its Date to
// tell the console's clock; beyond it, a cheap call is made to read it
// again (local and console clocks drift apart little, but they do).
const clockFresh = time.Minute

// undatedFresh is how long an answer without a Date header stands for a
// console that sends none (polls a few minutes apart never ask).
const undatedFresh = 10 * time.Minute

// Clock is the console's clock, from the Date header of its answers. With
// no recent answer at hand it asks the node for its version (a call that
// takes no time parameter) to read it; not when the latest answer, recent,
// carried no Date: that console shows no clock, and asking again at every
// poll would cost a call a poll for nothing.
func (c nodeConsole) Clock(ctx context.Context) (int64, bool, error) {
	if now, age, ok := c.api.ConsoleClock(); ok && age < clockFresh {
		return now.UnixMilli(), true, nil
	}
	if age, ok := c.api.UndatedAnswer(); ok && age < undatedFresh {
		return 0, false, nil
	}
	_, err := c.api.Version(ctx, c.node)
	if now, age, ok := c.api.ConsoleClock(); ok && age < clockFresh {
		return now.UnixMilli(), true, nil
	}
	if err != nil {
		return 0, false, err
	}
	return 0, false, nil
}

func (c nodeConsole) Count(ctx context.Context, start, end int64) (int64, error) {
	return c.api.EventCount(ctx, c.node, start, end)
}
