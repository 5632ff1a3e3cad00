package poller

import "github.com/indexima-exporter/indexima_exporter/tracker"

// NodeState is a configured node as the state store (package store) sees
// it: a key that names it across restarts, and its committed state. The
// store reads the state when it writes it, so that of two writes of one
// node the later one writes the newer state.
type NodeState struct {
	Key string // cluster "/" host:port
	n   *NodeRuntime
}

// State returns the node's committed state, nil before its first contact.
// It is shared, not copied: a committed state is never modified.
func (s NodeState) State() *tracker.State {
	s.n.mu.Lock()
	defer s.n.mu.Unlock()
	if !s.n.state.Contacted {
		return nil
	}
	return s.n.state
}

// StateKey is the key of a node in a saved state: the cluster's name and
// the node's host:port (its label name may change, the node stays).
func StateKey(cluster, target string) string { return cluster + "/" + target }

// NodeStates returns every configured node.
func (p *Poller) NodeStates() []NodeState {
	var out []NodeState
	for _, c := range p.Current().Clusters {
		for _, n := range c.Nodes {
			out = append(out, NodeState{Key: StateKey(c.Name, n.target.String()), n: n})
		}
	}
	return out
}

// NodeStateOf returns the node a /probe names (cluster, and the node's name
// or host:port, as Set.Find).
func (p *Poller) NodeStateOf(cluster, target string) (NodeState, bool) {
	s := p.Current()
	if ci, ni, ok := s.Find(cluster, target); ok {
		n := s.Clusters[ci].Nodes[ni]
		return NodeState{Key: StateKey(cluster, n.target.String()), n: n}, true
	}
	return NodeState{}, false
}

// Restore gives configured nodes not contacted yet their saved state, by
// key (NodeState.Key); call it after the first SetClusters, before the
// first scrape. A saved state may be old, damaged or hand-edited:
// tracker.State.Repair (which modifies states) drops what cannot be
// trusted, and tracker.State.Upgrade brings an earlier version's to this
// one. It returns how many
// nodes were restored; states of nodes no longer configured are ignored.
func (p *Poller) Restore(states map[string]*tracker.State) int {
	restored := 0
	for _, c := range p.Current().Clusters {
		for _, n := range c.Nodes {
			st, ok := states[StateKey(c.Name, n.target.String())]
			if !ok || st == nil || !st.Contacted {
				continue
			}
			n.mu.Lock()
			if !n.state.Contacted && n.inflight == nil {
				st.Repair(p.engine.Limits)
				// A state of an earlier version: its down nodes named once,
				// with the configuration loaded now (tracker.Schema).
				st.Upgrade(c.byNumber.namer())
				n.state = st.Clone()
				restored++
			}
			n.mu.Unlock()
		}
	}
	return restored
}
