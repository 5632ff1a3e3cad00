package collector

import (
	"time"

	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/indexima-exporter/indexima_exporter/poller"
	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// nodeView is what a sub-collector sees of a node during a scrape: what
// the node's polls committed and what this scrape's poll told.
type nodeView struct {
	out      sink
	d        *descs
	labels   []string
	pairs    []*dto.LabelPair
	st       *tracker.State
	info     poller.Info
	res      poller.Result
	lastPoll time.Duration
	failures map[string]uint64
	// lateWindow is the engine's late window (for its gauge).
	lateWindow time.Duration
	// created is the counters' created timestamp: when counting began for
	// the node (nil when not known).
	created *timestamppb.Timestamp
}

// view reads a node's committed outcome for emission.
func viewOf(out sink, d *descs, ns nodeSeries, res poller.Result, window time.Duration) *nodeView {
	c := ns.n.Committed()
	v := &nodeView{out: out, d: d, labels: ns.labels, pairs: ns.pairs, st: c.State, info: c.Info, res: res,
		lastPoll: c.LastPoll, failures: c.Failures, lateWindow: window}
	if c.State.Since > 0 {
		v.created = timestamppb.New(time.UnixMilli(c.State.Since))
	}
	return v
}
