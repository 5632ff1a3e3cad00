package simulator

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// activeFault is a fault with the number of requests it still applies to
// (remaining < 0: until cleared).
type activeFault struct {
	f         Fault
	remaining int
}

type faultState struct {
	mu      sync.Mutex
	console *activeFault
	nodes   map[string]*activeFault
}

func newActive(f Fault) *activeFault {
	rem := -1
	if f.Count > 0 {
		rem = f.Count
	}
	return &activeFault{f: f, remaining: rem}
}

func (s *Simulator) setNodeFault(node string, f Fault) {
	s.faults.mu.Lock()
	if f == (Fault{}) {
		delete(s.faults.nodes, node)
	} else {
		s.faults.nodes[node] = newActive(f)
	}
	s.faults.mu.Unlock()
}

func (s *Simulator) setConsoleFault(f Fault) {
	s.faults.mu.Lock()
	if f == (Fault{}) {
		s.faults.console = nil
	} else {
		s.faults.console = newActive(f)
	}
	s.faults.mu.Unlock()
	s.setDown(f.Down)
}

func (s *Simulator) clearFaults() {
	s.faults.mu.Lock()
	s.faults.console = nil
	s.faults.nodes = map[string]*activeFault{}
	s.faults.mu.Unlock()
	s.setDown(false)
}

// takeFault returns the fault that applies to this request (node "" is the
// console) and uses up one of its Count.
func (s *Simulator) takeFault(node string) (Fault, bool) {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	af := s.faults.console
	if node != "" {
		af = s.faults.nodes[node]
	}
	if af == nil {
		return Fault{}, false
	}
	f := af.f
	if af.remaining > 0 {
		af.remaining--
		if af.remaining == 0 {
			if node == "" {
				s.faults.console = nil
			} else {
				delete(s.faults.nodes, node)
			}
		}
	}
	return f, true
}

// wait blocks for d, or until the client goes away or the simulator closes.
// It reports whether the full delay elapsed.
func (s *Simulator) wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-s.closed:
	}
	return false
}

// applyFault plays f on the request; it reports whether the request has
// been answered (or abandoned) and normal processing must stop.
func (s *Simulator) applyFault(w http.ResponseWriter, r *http.Request, f Fault) bool {
	if f.Latency > 0 && !s.wait(r.Context(), f.Latency) {
		return true
	}
	if f.Hang {
		select {
		case <-r.Context().Done():
		case <-s.closed:
		}
		return true
	}
	if f.Status != 0 {
		s.writeMessage(w, r, f.Status, "injected fault: "+http.StatusText(f.Status))
		return true
	}
	if f.Body != BodyOK {
		s.writeBadBody(w, r, f.Body)
		return true
	}
	return false
}
