package collector

import (
	"encoding/json"
	"fmt"
	"io"
)

// savedState is the content of a state file: the tracking state of every
// node (cursor, seen fingerprints, pending running events, counters, state
// gauges), so a restarted exporter resumes where it stopped instead of
// taking a new baseline. WriteState / ReadState serialise it; opening,
// writing and renaming Options.StateFile is left to the caller.
//
// TODO(state file): read Options.StateFile at start (ReadState after the
// first SetClusters) and write it atomically after scrapes and at shutdown.
type savedState struct {
	Version int                   `json:"version"`
	Nodes   map[string]*nodeState `json:"nodes"` // by stateKey
}

const savedStateVersion = 1

func stateKey(cluster, target string) string { return cluster + "/" + target }

// snapshotState returns the committed state of every configured node. The
// states are shared, not copied: a committed state is never modified.
func (e *Exporter) snapshotState() savedState {
	e.mu.RLock()
	defer e.mu.RUnlock()
	s := savedState{Version: savedStateVersion, Nodes: map[string]*nodeState{}}
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
// It returns how many nodes were restored; states of unknown nodes or of
// another format version are ignored.
func (e *Exporter) restoreState(s savedState) int {
	if s.Version != savedStateVersion {
		return 0
	}
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
				st.repair(e.lim) // a file may be damaged or hand-edited
				n.state = st.clone()
				restored++
			}
			n.mu.Unlock()
		}
	}
	return restored
}

// WriteState writes the tracking state of every contacted node as JSON, for
// a state file (Options.StateFile). Write it to a temporary file and rename
// it, so a crash never leaves half a state.
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
	if s.Version != savedStateVersion {
		return 0, fmt.Errorf("reading exporter state: format version %d, want %d", s.Version, savedStateVersion)
	}
	return e.restoreState(s), nil
}
