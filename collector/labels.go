package collector

import (
	"github.com/indexima-exporter/indexima_exporter/event"
	"github.com/indexima-exporter/indexima_exporter/tally"
	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// The vocabularies the series of a node range over: the event types
// (event), the cluster states of the tally, the count semantics the engine
// detects. These short names keep the emission code readable.
var (
	knownTypes     = event.KnownTypes
	clusterStates  = tally.ClusterStates
	countSemantics = []string{string(tracker.CountCompleted), string(tracker.CountRunning), string(tracker.CountUnknown)}
)

const (
	otherType    = tally.OtherType
	stateUnknown = tally.StateUnknown
)

// The label names whose values are names a node's events add to its tally
// (tally.Name: valid UTF-8, at most tally.MaxNameBytes, at most
// --limits.max-label-values of each per node), and the vocabulary each
// label ranges over: its values dropped at the bound are counted by
// vocabulary (tally.Tally.Dropped) and exposed by label name.
const (
	labelIndex    = "index"
	labelTable    = "table"
	labelDownNode = "down_node"
)

// boundedLabels are the labels of the bounded vocabularies, in the order
// of indexima_exporter_label_values_dropped_total's series.
var boundedLabels = []struct{ label, vocab string }{
	{labelDownNode, tally.VocabDownNodes},
	{labelIndex, tally.VocabIndexes},
	{labelTable, tally.VocabTables},
}
