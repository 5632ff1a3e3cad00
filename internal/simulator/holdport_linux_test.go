package simulator

import (
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
)

// While the console is down its port stays the simulator's: connections are
// refused, no other listener can take the port (a parallel test's could, were
// it released), and the console comes back on it, again and again.
func TestConsoleDownHoldsThePort(t *testing.T) {
	s, _ := newTestSim(t, Config{})
	tok := login(t, s)
	addr := strings.TrimPrefix(s.URL(), "http://")
	for round := 1; round <= 3; round++ {
		s.SetConsoleFault(Fault{Down: true})
		if _, err := net.Dial("tcp", addr); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("round %d: dial %s while down: %v, want connection refused", round, addr, err)
		}
		for _, network := range []string{"tcp", "tcp4"} {
			if l, err := net.Listen(network, addr); err == nil {
				l.Close()
				t.Fatalf("round %d: a %s listener took %s while the console was down", round, network, addr)
			}
		}
		s.ClearFaults()
		if a := call(t, s, lastPath, reqOpts{token: tok, node: nodeA}); a.status != 200 {
			t.Fatalf("round %d: after the console is back: %d", round, a.status)
		}
	}
	// Closed while down, the simulator releases the port.
	s.SetConsoleFault(Fault{Down: true})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s.srvMu.Lock()
	defer s.srvMu.Unlock()
	if s.hold != nil {
		t.Error("Close kept the port held")
	}
}

// A port the user names is not shared: a second simulator on it fails.
func TestNamedPortNotShared(t *testing.T) {
	s, _ := newTestSim(t, Config{})
	other := New(Config{})
	if err := other.Start(strings.TrimPrefix(s.URL(), "http://")); err == nil {
		other.Close()
		t.Fatal("a second simulator started on the first one's port")
	}
}
