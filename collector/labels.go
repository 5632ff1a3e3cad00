package collector

import "github.com/indexima-exporter/indexima_exporter/tracker"

// The event and state vocabularies, and the label names bounded per node,
// are the counting engine's (tracker); these short names keep the emission
// code readable.
var (
	knownTypes     = tracker.KnownTypes
	clusterStates  = tracker.ClusterStates
	countSemantics = []string{string(tracker.CountCompleted), string(tracker.CountRunning), string(tracker.CountUnknown)}
)

const (
	otherType     = tracker.OtherType
	stateUnknown  = tracker.StateUnknown
	labelIndex    = tracker.LabelIndex
	labelTable    = tracker.LabelTable
	labelDownNode = tracker.LabelDownNode
)
