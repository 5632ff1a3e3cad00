package faults

import (
	"math"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// The console goes away (connections refused) for several scrapes of
// simulated time, then comes back: every node is down meanwhile, console_up
// says why, and afterwards the events of the outage are all counted once.
func TestConsoleDownThenBack(t *testing.T) {
	r := newRig(t, rigOpts{sim: simulator.Config{Seed: 4, Rate: 2}})
	r.scrape()
	r.run(3, 30*time.Second)
	r.sim.SetConsoleFault(simulator.Fault{Down: true})
	for i := 0; i < 5; i++ {
		r.advance(2 * time.Minute)
		s := r.scrape()
		if v, _ := s.value("indexima_console_up", nil); v != 0 {
			t.Fatalf("console_up = %v while the console is down", v)
		}
		for _, n := range r.nodes {
			if up, _ := s.value("indexima_up", node(n)); up != 0 {
				t.Fatalf("node %s up while the console is down", n)
			}
		}
	}
	r.sim.ClearFaults()
	s := r.settle()
	if v, _ := s.value("indexima_console_up", nil); v != 1 {
		t.Fatalf("console_up = %v after the console came back", v)
	}
	tl := r.check(s)
	t.Logf("console down 10 simulated minutes: %s", tl)
}

// A console answering 5xx to everything, login included, for a burst.
func TestConsole5xxBurst(t *testing.T) {
	r := newRig(t, rigOpts{sim: simulator.Config{Seed: 5, Rate: 2}})
	r.scrape()
	r.run(2, 30*time.Second)
	r.sim.SetConsoleFault(simulator.Fault{Status: 503, Count: 7})
	r.run(3, 30*time.Second)
	r.sim.RevokeTokens() // the next login meets the burst's tail, if any is left
	r.run(3, 30*time.Second)
	r.sim.ClearFaults()
	tl := r.check(r.settle())
	t.Logf("console 5xx burst: %s", tl)
}

// Tokens expire every few scrapes (simulated lifetime) and are revoked in
// the middle of a scrape: the exporter logs in again once per expiry, not
// once per call, and counts exactly.
func TestTokenExpiryAndRevocation(t *testing.T) {
	r := newRig(t, rigOpts{sim: simulator.Config{Seed: 6, Rate: 2, TokenLifetime: 5 * time.Minute}})
	r.scrape()
	const scrapes = 30
	r.run(scrapes, time.Minute)
	st := r.sim.Stats()
	// One login at start, then one per expiry (every 5 simulated minutes).
	if most := 1 + scrapes/5 + 1; st.Logins > most {
		t.Errorf("%d logins over %d scrapes with a 5 min token lifetime; want at most %d (one per expiry)", st.Logins, scrapes, most)
	}
	if st.Refused == 0 {
		t.Errorf("no call was ever refused: the token lifetime did not bite, the case proves nothing")
	}

	// Revocation mid-scrape: one node answers slowly, so the scrape is
	// still running when every token is revoked.
	slow := r.nodes[2]
	r.sim.SetNodeFault(slow, simulator.Fault{Latency: 400 * time.Millisecond, Count: 1})
	r.advance(30 * time.Second)
	before := r.sim.Stats()
	done := make(chan scrape, 1)
	go func() { done <- parseMetrics(t, r.exp.metricsText()) }()
	testkit.WaitFor(t, "the slow node's call to arrive", func() bool {
		return r.sim.Stats().NodeRequests[slow] > before.NodeRequests[slow]
	})
	r.sim.RevokeTokens()
	r.observe(<-done)
	s := r.scrape() // the calls after the revocation
	after := r.sim.Stats()
	if n := after.Logins - before.Logins; n > 2 {
		t.Errorf("%d logins after one revocation; want 1 (single login shared by every call)", n)
	}
	if after.Refused == before.Refused {
		t.Errorf("no call refused after the revocation: the case proves nothing")
	}
	for _, n := range r.nodes {
		if up, _ := s.value("indexima_up", node(n)); up != 1 {
			t.Errorf("node %s down after re-login", n)
		}
	}
	tl := r.check(r.settle())
	t.Logf("token expiry + revocation: %d logins, %d refused calls; %s", after.Logins, after.Refused, tl)
}

// A wrong password: many scrapes in a row do not become a login storm
// (failed logins back off), and once the password file holds the right
// password again a reload brings everything back with exact counts.
func TestWrongPasswordNoLoginStorm(t *testing.T) {
	r := newRig(t, rigOpts{sim: simulator.Config{Seed: 7, Rate: 2}})
	r.scrape()
	r.run(2, 30*time.Second)
	r.sim.SetPassword(user, "changed-on-the-console")
	r.sim.RevokeTokens()
	r.sim.ResetStats()
	const scrapes = 50
	var s scrape
	began := time.Now()
	for i := 0; i < scrapes; i++ {
		r.advance(30 * time.Second)
		s = r.scrape()
		for _, n := range r.nodes {
			if up, _ := s.value("indexima_up", node(n)); up != 0 {
				t.Fatalf("node %s up with a refused password", n)
			}
		}
	}
	st := r.sim.Stats()
	// The backoff (1 s, doubling) allows n attempts in 2^(n-1)-1 seconds:
	// a handful, however slow the machine, never one per call (150 calls).
	elapsed := time.Since(began).Seconds()
	allowed := 2 + int(math.Log2(elapsed+1))
	if st.LoginFailures > allowed {
		t.Errorf("%d failed logins over %d scrapes of %d nodes in %.1fs: a login storm (backoff allows %d)",
			st.LoginFailures, scrapes, len(r.nodes), elapsed, allowed)
	}
	if st.LoginFailures == 0 {
		t.Errorf("no failed login: the case proves nothing")
	}
	if v, _ := s.value("indexima_console_up", nil); v != 0 {
		t.Errorf("console_up = %v while logins are refused", v)
	}
	if v, ok := s.value("indexima_exporter_logins_total", map[string]string{"result": "failure"}); !ok || v < 1 {
		t.Errorf("indexima_exporter_logins_total{result=\"failure\"} = %v, %v", v, ok)
	}
	t.Logf("wrong password: %d scrapes, %d failed logins, %d calls refused", scrapes, st.LoginFailures, st.Refused)

	// Rotation: the operator writes the new password and reloads.
	r.writePassword("changed-on-the-console")
	if code, body := r.exp.reloadHTTP(); code != 200 {
		t.Fatalf("reload after password rotation: %d %s", code, body)
	}
	tl := r.check(r.settle())
	t.Logf("after rotation and reload: %s", tl)
}
