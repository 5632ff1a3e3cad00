package poller

import (
	"context"
	"time"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
	"github.com/indexima-exporter/indexima_exporter/event"
)

// nodeAPI is the part of *apiclient.Client the poller uses. Keeping it
// small lets the tracking logic be reasoned about (and tested) as a pure
// state machine fed with listings.
type nodeAPI interface {
	StreamListing(ctx context.Context, node apiclient.Node, q event.Query, h event.Handler) (apiclient.ListingInfo, error)
	EventCount(ctx context.Context, node apiclient.Node, start, end int64) (int64, error)
	Version(ctx context.Context, node apiclient.Node) (apiclient.VersionInfo, error)
	Columns(ctx context.Context, node apiclient.Node, table string) (apiclient.ColumnsInfo, error)
	ConsoleClock() (now time.Time, age time.Duration, ok bool)
	UndatedAnswer() (age time.Duration, ok bool)
}

var _ nodeAPI = (*apiclient.Client)(nil)
