package apiclient

import (
	"sync"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// TestTokenRenewal: an expired or revoked token is replaced by exactly one
// new login, whatever status the console uses to refuse it.
func TestTokenRenewal(t *testing.T) {
	for _, status := range []int{401, 403, 200} {
		t.Run(itoa(status), func(t *testing.T) {
			sim, clock := newSim(t, func(c *simulator.Config) {
				c.TokenLifetime = time.Hour
				c.RefusalStatus = status
			})
			c := newClient(t, sim.URL(), nil)
			ctx := ctxT(t)
			if _, err := c.events(ctx, node1); err != nil {
				t.Fatal(err)
			}
			if n := sim.Stats().Logins; n != 1 {
				t.Fatalf("%d logins", n)
			}

			clock.Advance(2 * time.Hour) // the token expires
			if _, err := c.EventCount(ctx, node1, 0, clock.Now().UnixMilli()); err != nil {
				t.Fatalf("after expiry: %v", err)
			}
			if st := sim.Stats(); st.Logins != 2 || st.Refused != 1 {
				t.Fatalf("after expiry: %d logins, %d refused calls", st.Logins, st.Refused)
			}

			sim.RevokeTokens()
			if _, err := c.Version(ctx, node2); err != nil {
				t.Fatalf("after revocation: %v", err)
			}
			if st := sim.Stats(); st.Logins != 3 || st.Refused != 2 {
				t.Fatalf("after revocation: %d logins, %d refused calls", st.Logins, st.Refused)
			}
			if c.obs.login(LoginSuccess) != 3 {
				t.Fatalf("observer logins %v", c.obs.logins)
			}
		})
	}
}

// TestSingleLoginUnderConcurrency: 50 callers find the token revoked at
// once; exactly one new login happens and every call succeeds.
func TestSingleLoginUnderConcurrency(t *testing.T) {
	sim, _ := newSim(t, nil)
	c := newClient(t, sim.URL(), nil)
	ctx := ctxT(t)
	if err := c.login(ctx); err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		sim.RevokeTokens()
		before := sim.Stats().Logins
		var wg sync.WaitGroup
		errs := make(chan error, 50)
		for i := range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var err error
				if i%2 == 0 {
					_, err = c.events(ctx, node1)
				} else {
					_, err = c.EventCount(ctx, node2, 0, 1)
				}
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if got := sim.Stats().Logins - before; got != 1 {
			t.Fatalf("round %d: %d logins after a revocation, want exactly 1", round, got)
		}
	}
}

// TestLoginBackoff: a wrong password does not become a login storm; the
// backoff doubles, and a fixed password is picked up after it.
func TestLoginBackoff(t *testing.T) {
	sim, _ := newSim(t, nil)
	sim.SetPassword(testUser, "changed")
	c := newClient(t, sim.URL(), func(c *Config) {
		c.LoginBackoff = time.Minute
		c.MaxLoginBackoff = 3 * time.Minute
	})
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	ctx := ctxT(t)

	calls := func(n int) {
		t.Helper()
		for range n {
			_, err := c.events(ctx, node1)
			if kindOf(err) != KindBadCredentials {
				t.Fatalf("got %v, want bad credentials", err)
			}
		}
	}
	failures := func() int { return sim.Stats().LoginFailures }

	calls(20)
	if f := failures(); f != 1 {
		t.Fatalf("%d login attempts for 20 calls in the backoff, want 1", f)
	}
	if st := sim.Stats(); st.NodeRequests[node1.String()] != 0 {
		t.Fatalf("calls reached the node without a token: %v", st.NodeRequests)
	}
	advance(61 * time.Second) // past the first backoff (1m)
	calls(5)
	if f := failures(); f != 2 {
		t.Fatalf("%d attempts after the first backoff, want 2", f)
	}
	advance(61 * time.Second) // the backoff doubled to 2m: still waiting
	calls(5)
	if f := failures(); f != 2 {
		t.Fatalf("%d attempts inside the doubled backoff, want 2", f)
	}
	advance(60 * time.Second)
	calls(1)
	if f := failures(); f != 3 {
		t.Fatalf("%d attempts after the doubled backoff, want 3", f)
	}
	advance(181 * time.Second) // capped at 3m
	calls(1)
	if f := failures(); f != 4 {
		t.Fatalf("%d attempts after the capped backoff, want 4", f)
	}
	// Four logins made, all refused; the 28 other calls (19 + 4 + 5 + 0 +
	// 0) failed on the backoff without a login.
	if c.obs.login(LoginFailure) != 4 || c.obs.login(LoginError) != 0 || c.obs.skips() != 28 {
		t.Fatalf("observer logins %v, %d skipped; want 4 failures and 28 skipped", c.obs.logins, c.obs.skips())
	}

	sim.SetPassword(testUser, testPassword)
	advance(181 * time.Second)
	if _, err := c.events(ctx, node1); err != nil {
		t.Fatalf("after the password is fixed: %v", err)
	}
	if st := sim.Stats(); st.Logins != 1 || st.LoginFailures != 4 {
		t.Fatalf("%d logins, %d failures", st.Logins, st.LoginFailures)
	}
}

// TestConcurrentBadLogin: many callers with a wrong password cause one
// login attempt.
func TestConcurrentBadLogin(t *testing.T) {
	sim, _ := newSim(t, nil)
	c := newClient(t, sim.URL(), func(c *Config) { c.Password = "wrong"; c.LoginBackoff = time.Hour })
	ctx := ctxT(t)
	var wg sync.WaitGroup
	for range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.events(ctx, node1); kindOf(err) != KindBadCredentials {
				t.Errorf("got %v", err)
			}
		}()
	}
	wg.Wait()
	if f := sim.Stats().LoginFailures; f != 1 {
		t.Fatalf("%d login attempts from 30 concurrent callers", f)
	}
}

// TestLoginBackoffTransientCap: a console that answers logins with 5xx is
// retried with a backoff capped well below the one for refused credentials,
// so recovery after a console outage is not delayed by minutes.
func TestLoginBackoffTransientCap(t *testing.T) {
	sim, _ := newSim(t, nil)
	sim.SetConsoleFault(simulator.Fault{Status: 503})
	c := newClient(t, sim.URL(), func(c *Config) {
		c.LoginBackoff = 20 * time.Second
		c.MaxLoginBackoff = 10 * time.Minute
	})
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	ctx := ctxT(t)
	logins := func() int { return sim.Stats().Requests["login"] }

	for i := range 6 {
		_, err := c.events(ctx, node1)
		if kindOf(err) != KindConsoleUnreachable {
			t.Fatalf("call %d: got %v, want console unreachable", i, err)
		}
		if got := logins(); got != i+1 {
			t.Fatalf("after %d backoffs: %d login attempts, want %d", i, got, i+1)
		}
		// 20s, then 30s each time (40s, 80s... would exceed the 30s cap).
		advance(31 * time.Second)
	}
	sim.ClearFaults()
	if _, err := c.events(ctx, node1); err != nil {
		t.Fatalf("after the console came back: %v", err)
	}
}

// TestLoginOutcomeReportedOnce: a failed login is reported once, by the
// login itself, even when it fails before the caller that started it looks
// again (a refused connection fails at once). The hook makes the caller
// look only after the login finished, the interleaving that made one
// unreachable console count two login errors.
func TestLoginOutcomeReportedOnce(t *testing.T) {
	loginFirst := func(c testClient) {
		c.auth.afterLoginStart = func(done <-chan struct{}) { <-done }
	}
	t.Run("connection refused", func(t *testing.T) {
		c := newClient(t, refusingURL(t), nil)
		loginFirst(c)
		_, err := c.Version(ctxT(t), node1)
		wantError(t, err, KindConsoleUnreachable, EndpointLogin)
		if c.obs.login(LoginError) != 1 || len(c.obs.logins) != 1 {
			t.Fatalf("observer logins %v, want one error", c.obs.logins)
		}
	})
	t.Run("login 5xx", func(t *testing.T) {
		sim, _ := newSim(t, nil)
		sim.SetConsoleFault(simulator.Fault{Status: 503})
		c := newClient(t, sim.URL(), nil)
		loginFirst(c)
		_, err := c.events(ctxT(t), node1)
		if e := checkError(t, err, KindConsoleUnreachable, EndpointLogin); e.Status != 503 {
			t.Fatalf("status %d, want the login's 503", e.Status)
		}
		if n := sim.Stats().Requests["login"]; n != 1 {
			t.Fatalf("%d logins", n)
		}
		if c.obs.login(LoginError) != 1 || len(c.obs.logins) != 1 {
			t.Fatalf("observer logins %v, want one error", c.obs.logins)
		}
	})
	t.Run("bad credentials", func(t *testing.T) {
		sim, _ := newSim(t, nil)
		c := newClient(t, sim.URL(), func(c *Config) { c.Password = "wrong" })
		loginFirst(c)
		_, err := c.events(ctxT(t), node1)
		wantError(t, err, KindBadCredentials, EndpointLogin)
		// The refusal is the login's outcome; the caller adds no error.
		if c.obs.login(LoginFailure) != 1 || len(c.obs.logins) != 1 {
			t.Fatalf("observer logins %v, want one failure", c.obs.logins)
		}
	})
}
