package collector

import (
	"slices"
	"time"

	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/indexima-exporter/indexima_exporter/poller"
	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// nodeView is what a sub-collector sees of a node during a scrape: what
// the node's polls committed and what this scrape's poll told.
type nodeView struct {
	out      nodeSink
	keys     *[]string // the scrape's scratch of sortedKeys
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
func viewOf(out nodeSink, keys *[]string, d *descs, ns nodeSeries, res poller.Result, window time.Duration) *nodeView {
	c := ns.n.Committed()
	v := &nodeView{out: out, keys: keys, d: d, labels: ns.labels, pairs: ns.pairs, st: c.State, info: c.Info, res: res,
		lastPoll: c.LastPoll, failures: c.Failures, lateWindow: window}
	if c.State.Since > 0 {
		v.created = timestamppb.New(time.UnixMilli(c.State.Since))
	}
	return v
}

// sortedKeys returns the keys of m, sorted, in the scrape's scratch
// (v.keys): the caller's loop over them must end before the next call.
func sortedKeys[V any](v *nodeView, m map[string]V) []string {
	keys := (*v.keys)[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	*v.keys = keys
	return keys
}
