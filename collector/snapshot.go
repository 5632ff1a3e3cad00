package collector

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// savedState is the content of a state file: the counting engine's state of
// every node (cursor, window of known events, running events, what it
// learned of the console, counters, state gauges), so a restarted exporter
// resumes where it stopped instead of taking a new baseline. WriteState /
// ReadState serialise it; opening, writing and renaming the file is the
// caller's.
type savedState struct {
	Version int                       `json:"version"`
	Nodes   map[string]*tracker.State `json:"nodes"` // by stateKey
}

// savedStateVersion is the format written. Format 1 (a dedup set instead of
// the window of known events) is still read: tracker.State.Repair turns it
// into format 2.
const (
	savedStateVersion = 2
	oldestReadVersion = 1
)

func stateKey(cluster, target string) string { return cluster + "/" + target }

// snapshotState returns the committed state of every configured node. The
// states are shared, not copied: a committed state is never modified.
func (e *Exporter) snapshotState() savedState {
	e.mu.RLock()
	defer e.mu.RUnlock()
	s := savedState{Version: savedStateVersion, Nodes: map[string]*tracker.State{}}
	for _, c := range e.clusters {
		for _, n := range c.nodes {
			n.mu.Lock()
			if n.state.Contacted {
				s.Nodes[stateKey(c.name, n.target.String())] = n.state
			}
			n.mu.Unlock()
		}
	}
	return s
}

// restoreState gives configured nodes not contacted yet their saved state.
// It returns how many nodes were restored; states of unknown nodes are
// ignored.
func (e *Exporter) restoreState(s savedState) int {
	e.mu.RLock()
	defer e.mu.RUnlock()
	restored := 0
	for _, c := range e.clusters {
		for _, n := range c.nodes {
			st, ok := s.Nodes[stateKey(c.name, n.target.String())]
			if !ok || st == nil || !st.Contacted {
				continue
			}
			n.mu.Lock()
			if !n.state.Contacted && n.inflight == nil {
				st.Repair(e.engine.Limits) // a file may be old, damaged or hand-edited
				n.state = st.Clone()
				restored++
			}
			n.mu.Unlock()
		}
	}
	return restored
}

// WriteState writes the state of every contacted node as JSON, for a state
// file. Write it to a temporary file and rename it, so a crash never leaves
// half a state.
func (e *Exporter) WriteState(w io.Writer) error {
	return json.NewEncoder(w).Encode(e.snapshotState())
}

// ReadState restores node states written by WriteState into the configured
// nodes not contacted yet (call it after the first SetClusters, before the
// first scrape). It returns the number of nodes restored; states of nodes no
// longer configured are ignored.
func (e *Exporter) ReadState(r io.Reader) (int, error) {
	var s savedState
	if err := json.NewDecoder(r).Decode(&s); err != nil {
		return 0, fmt.Errorf("reading exporter state: %w", err)
	}
	if s.Version < oldestReadVersion || s.Version > savedStateVersion {
		return 0, fmt.Errorf("reading exporter state: format version %d, want %d to %d", s.Version, oldestReadVersion, savedStateVersion)
	}
	return e.restoreState(s), nil
}
