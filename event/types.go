package event

// The event types of the specification (section 6), in its order. The
// client interns them, the engine tells them from the types a newer console
// adds, the collector gives each its series from first contact on: the one
// list every package reads.
const (
	ClusterStart       = "CLUSTER_START"
	ClusterStop        = "CLUSTER_STOP"
	NodeDown           = "NODE_DOWN"
	ClusterInit        = "CLUSTER_INIT"
	MemoryLow          = "MEMORY_LOW"
	TableLoaded        = "TABLE_LOADED"
	HyperIndexLoaded   = "HYPER_INDEX_LOADED"
	HyperIndexUnloaded = "HYPER_INDEX_UNLOADED"
	SaveMetadata       = "SAVE_METADATA"
	PreloadFinished    = "PRELOAD_FINISHED"
)

// KnownTypes are the event types of the specification, in its order. A
// caller must not modify it.
var KnownTypes = []string{
	ClusterStart, ClusterStop, NodeDown, ClusterInit, MemoryLow,
	TableLoaded, HyperIndexLoaded, HyperIndexUnloaded, SaveMetadata, PreloadFinished,
}

var knownSet = func() map[string]bool {
	m := make(map[string]bool, len(KnownTypes))
	for _, t := range KnownTypes {
		m[t] = true
	}
	return m
}()

// IsKnown tells whether typ is one of KnownTypes.
func IsKnown(typ string) bool { return knownSet[typ] }
