package tracker

import (
	"context"
	"errors"

	"github.com/indexima-exporter/indexima_exporter/event"
)

// ListingInfo is what a listing says besides its events.
type ListingInfo struct {
	// Last is the listing's `last`, Unix milliseconds (HasLast). The
	// specification calls it "the timestamp of the current listing" and no
	// more: a node's clock, the console's, the newest event returned or the
	// :time asked are all readings of it, so the engine keeps it for the
	// logs and trusts it for nothing.
	Last    int64
	HasLast bool
	// Date is the console's clock when it answered (its Date header), Unix
	// milliseconds (HasDate): the one clock the console shows.
	Date    int64
	HasDate bool
}

// Console is what the engine needs of one node, through the cluster's
// console: its event listings and its event count. The API client
// satisfies it (through a small adapter naming the node); the tests use
// console models in-process.
type Console interface {
	List(ctx context.Context, q event.Query, h event.Handler) (ListingInfo, error)
	// Count is get/event/count/:start/:end: the events "starting between
	// :start and :end". Whether the bounds are included, and whether
	// running events are, is the console's choice; the engine finds out.
	Count(ctx context.Context, start, end int64) (int64, error)
	// Clock is the console's clock now, Unix milliseconds, from the Date
	// header of its latest answer (advanced by the time since); it may
	// make a cheap call when no answer is at hand. ok is false when the
	// console's answers carry no Date.
	Clock(ctx context.Context) (ms int64, ok bool, err error)
}

// ErrTooLarge marks a listing refused for its size (the client's body
// bound): the engine then reads that interval in pages instead of asking
// for it whole again. A Console wraps its size error with it.
var ErrTooLarge = errors.New("listing too large")
