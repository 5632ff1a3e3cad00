package poller

import (
	"context"
	"time"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
	"github.com/indexima-exporter/indexima_exporter/event"
)

// nodeAPI is the part of *apiclient.Client the poller calls: the listings
// and the count, which it hands to the counting engine as a tracker.Console
// (nodeConsole), the info calls it makes itself, and the console's clock.
// The counting logic is the engine's (tracker), tested there against
// console models; the poller only drives it.
type nodeAPI interface {
	StreamListing(ctx context.Context, node apiclient.Node, q event.Query, h event.Handler) (apiclient.ListingInfo, error)
	EventCount(ctx context.Context, node apiclient.Node, start, end int64) (int64, error)
	Version(ctx context.Context, node apiclient.Node) (apiclient.VersionInfo, error)
	Columns(ctx context.Context, node apiclient.Node, table string) (apiclient.ColumnsInfo, error)
	ConsoleClock() (now time.Time, age time.Duration, ok bool)
	UndatedAnswer() (age time.Duration, ok bool)
}

var _ nodeAPI = (*apiclient.Client)(nil)
