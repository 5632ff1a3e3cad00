package faults

import (
	"net/http"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// The reference run: no fault at all. Every other case is this plus trouble.
func TestNoFault(t *testing.T) {
	r := newRig(t, rigOpts{sim: simulator.Config{Seed: 1, Rate: 1}})
	r.scrape()
	r.run(20, 30*time.Second)
	tl := r.check(r.settle())
	if tl.expected == 0 {
		t.Fatal("the scenario generated no event to count; it proves nothing")
	}
	t.Logf("no fault: %s", tl)
}

// A node failing for several scrapes with each kind of bad answer: it is
// down meanwhile, the other nodes are right all along, and after it comes
// back its counters catch up exactly.
func TestNodeBadAnswers(t *testing.T) {
	cases := map[string]simulator.Fault{
		"status 502":         {Status: http.StatusBadGateway},
		"5xx burst":          {Status: http.StatusServiceUnavailable, Count: 3},
		"malformed json":     {Body: simulator.BodyMalformedJSON},
		"truncated gzip":     {Body: simulator.BodyTruncatedGzip},
		"decompression bomb": {Body: simulator.BodyBomb},
		"endless body":       {Body: simulator.BodyEndless},
		"wrong shape":        {Body: simulator.BodyWrongShape},
		"html proxy page":    {Body: simulator.BodyHTML},
		"message body":       {Body: simulator.BodyMessage},
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, rigOpts{sim: simulator.Config{Seed: 2, Rate: 2}})
			bad := r.nodes[1]
			r.scrape()
			r.run(3, 30*time.Second)
			r.sim.SetNodeFault(bad, f)
			for i := 0; i < 4; i++ {
				r.advance(40 * time.Second)
				s := r.scrape()
				for _, n := range r.nodes {
					up, _ := s.value("indexima_up", node(n))
					if n != bad && up != 1 {
						t.Fatalf("scrape %d: healthy node %s is down", i, n)
					}
					if n == bad && up != 0 && f.Count == 0 {
						t.Fatalf("scrape %d: failing node %s is up", i, n)
					}
				}
				if v, _ := s.value("indexima_console_up", nil); v != 1 {
					t.Fatalf("console_up %v while only a node fails", v)
				}
				for _, n := range r.nodes {
					if n != bad {
						r.checkNode(s, n)
					}
				}
			}
			r.sim.ClearFaults()
			r.run(2, 30*time.Second)
			tl := r.check(r.settle())
			t.Logf("%s: %s", name, tl)
		})
	}
}

// A node that never answers: the scrape still completes, bounded by the
// console timeout (not by the number of calls), and the other nodes are right.
func TestNodeHangs(t *testing.T) {
	r := newRig(t, rigOpts{sim: simulator.Config{Seed: 3, Rate: 2}, timeout: 2 * time.Second})
	hung := r.nodes[0]
	r.scrape()
	r.run(2, 30*time.Second)
	r.sim.SetNodeFault(hung, simulator.Fault{Hang: true})
	for i := 0; i < 3; i++ {
		r.advance(30 * time.Second)
		start := time.Now()
		s := r.scrape()
		took := time.Since(start)
		// A bound, not a speed assertion: one hung call costs one timeout;
		// a poll that waited on several hung calls would take a multiple.
		if limit := r.timeout + 5*time.Second; took > limit {
			t.Fatalf("scrape with a hung node took %v, over the console timeout %v plus margin", took, r.timeout)
		}
		if up, _ := s.value("indexima_up", node(hung)); up != 0 {
			t.Fatalf("hung node is up")
		}
		for _, n := range r.nodes[1:] {
			if up, _ := s.value("indexima_up", node(n)); up != 1 {
				t.Fatalf("node %s down because another hangs", n)
			}
			r.checkNode(s, n)
		}
	}
	r.sim.ClearFaults()
	tl := r.check(r.settle())
	t.Logf("hang: %s", tl)
}

// Credentials are the console's: when the console refuses the exporter's
// token on one node's calls, even right after a new login, while the other
// nodes answer (as when tokens are revoked in the middle of a scrape), the
// console is down for that scrape. Otherwise the alerts would take that
// node for unreachable, with the console up, while the console refuses the
// exporter (the e2e once saw IndeximaNodeUnreachable pending that way).
func TestRefusedCredentialsAreTheConsoles(t *testing.T) {
	r := newRig(t, rigOpts{sim: simulator.Config{Seed: 4, Rate: 2}})
	refused := r.nodes[1]
	r.scrape()
	r.run(2, 30*time.Second)
	r.sim.SetNodeFault(refused, simulator.Fault{Status: http.StatusUnauthorized})
	r.advance(30 * time.Second)
	s := r.scrape()
	for _, n := range r.nodes {
		up, _ := s.value("indexima_up", node(n))
		if want := float64(boolToInt(n != refused)); up != want {
			t.Errorf("node %s: up %v, want %v", n, up, want)
		}
	}
	if v, _ := s.value("indexima_exporter_node_poll_failures_total", map[string]string{"node": refused, "reason": "bad_credentials"}); v < 1 {
		t.Errorf("node %s: no failed poll for bad_credentials (%v)", refused, v)
	}
	if v, ok := s.value("indexima_console_up", nil); !ok || v != 0 {
		t.Errorf("console_up %v (present %v) while the console refuses the exporter's token on a node", v, ok)
	}
	r.sim.ClearFaults()
	r.advance(30 * time.Second)
	if v, _ := r.scrape().value("indexima_console_up", nil); v != 1 {
		t.Errorf("console_up %v once the console accepts the token again", v)
	}
	r.check(r.settle())
}

func boolToInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
