package simulator

import "sync"

type statsState struct {
	mu sync.Mutex
	s  Stats
}

func (st *statsState) reset() {
	st.mu.Lock()
	st.s = Stats{Requests: map[string]int{}, NodeRequests: map[string]int{}, Protocols: map[string]int{}}
	st.mu.Unlock()
}

func (st *statsState) add(f func(*Stats)) {
	st.mu.Lock()
	f(&st.s)
	st.mu.Unlock()
}

func (s *Simulator) stats() Stats {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	out := s.st.s
	out.Requests = make(map[string]int, len(s.st.s.Requests))
	for k, v := range s.st.s.Requests {
		out.Requests[k] = v
	}
	out.NodeRequests = make(map[string]int, len(s.st.s.NodeRequests))
	for k, v := range s.st.s.NodeRequests {
		out.NodeRequests[k] = v
	}
	out.Protocols = make(map[string]int, len(s.st.s.Protocols))
	for k, v := range s.st.s.Protocols {
		out.Protocols[k] = v
	}
	return out
}

func (s *Simulator) resetStats() { s.st.reset() }
