package tracker

// Schema is what a State of this version holds and what its fields mean;
// a saved state carries the schema it was written in (State.Schema), so
// that a version reading it knows what it has:
//
//   - 1, written as no "schema" field: the states of earlier versions (the
//     previous main, cde582f, and before). NodeDown is keyed by the
//     NODE_DOWN comment (the node's number: cde582f exported it as it is,
//     the versions after it named it at each scrape with the configuration
//     loaded then); NodeDownLast is absent (cde582f did not keep it) or
//     keyed the same way.
//   - 2: NodeDown and NodeDownLast are keyed by the down node's name,
//     given when the report was first read (Options.DownNodeName), and
//     NodeDownLast is kept; RelearnNodeDown may be set. The evidence of the
//     node's clock lag (Lateness.Clock) is kept too; a state without it
//     learns it from its next polls (clocklag.go).
//
// A version that meets a schema above its own refuses the state rather
// than drop what it does not know (the state store checks it, with the
// fields it does not know: docs/state.md).
const Schema = 2

// Upgrade brings a contacted state of an earlier schema to this one, once:
// its down-node keys (numbers) are named by name, as the engine would name
// them now (reports that name one node merge: counts added, the latest
// date kept), and RelearnNodeDown is set, since such a state may lack the
// dates of the latest reports. A state of this schema is left as it is.
func (st *State) Upgrade(name DownNodeNamer) {
	if !st.Contacted || st.Schema >= Schema {
		return
	}
	st.own(partDown)
	if len(st.NodeDown) > 0 {
		named := make(map[string]uint64, len(st.NodeDown))
		for k, n := range st.NodeDown {
			named[nameDownNode(name, k)] += n
		}
		st.NodeDown = named
	}
	if len(st.NodeDownLast) > 0 {
		named := make(map[string]int64, len(st.NodeDownLast))
		for k, date := range st.NodeDownLast {
			n := nameDownNode(name, k)
			if d, ok := named[n]; !ok || date > d {
				named[n] = date
			}
		}
		st.NodeDownLast = named
	}
	st.RelearnNodeDown = true
	st.Schema = Schema
}
