package apiclient

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

var ssoModes = []simulator.SSOMode{simulator.SSOLoginPage, simulator.SSORedirect}

// TestSSOProxySessionExpiry: behind a single-sign-on proxy that answers an
// expired session with its login page (200 text/html) or a redirect to it
// (302), every call still succeeds: the client logs in again once per expiry
// and retries, and a streamed listing hands each event over exactly once.
func TestSSOProxySessionExpiry(t *testing.T) {
	for _, mode := range ssoModes {
		t.Run(string(mode), func(t *testing.T) {
			sim, clock := newSim(t, func(c *simulator.Config) {
				c.TokenLifetime = time.Minute
				c.SSOProxy = mode
			})
			c := newClient(t, sim.URL(), nil)
			ctx := ctxT(t)
			before, err := c.events(ctx, node1) // no event arrives: Rate is 0
			if err != nil {
				t.Fatal(err)
			}
			if len(before.Reqs) == 0 {
				t.Fatal("the day's listing is empty: the listing check proves nothing")
			}
			const expiries = 5
			for i := range expiries {
				clock.Advance(time.Minute) // the token expires
				switch i % 4 {
				case 0:
					h := &countingHandler{}
					info, err := c.stream(ctx, dayRequest(node1, time.Time{}), h)
					if err != nil {
						t.Fatalf("expiry %d: listing: %v", i, err)
					}
					if h.n != len(before.Reqs)+len(before.Runnings) || info.Reqs != len(before.Reqs) {
						t.Fatalf("expiry %d: %d events handed over (info %d), want %d once each",
							i, h.n, info.Reqs, len(before.Reqs))
					}
				case 1:
					if _, err := c.EventCount(ctx, node2, 0, clock.Now().UnixMilli()); err != nil {
						t.Fatalf("expiry %d: count: %v", i, err)
					}
				case 2:
					if v, err := c.Version(ctx, node1); err != nil || v.Version != "2024.1.7" {
						t.Fatalf("expiry %d: version %+v, %v", i, v, err)
					}
				case 3:
					if _, err := c.Columns(ctx, node1, sim.Tables(node1.String())[0]); err != nil {
						t.Fatalf("expiry %d: columns: %v", i, err)
					}
				}
				// A second call with the fresh token needs no login.
				if _, err := c.lastEvents(ctx, node2, clock.Now().UnixMilli()); err != nil {
					t.Fatalf("expiry %d: second call: %v", i, err)
				}
			}
			st := sim.Stats()
			if st.Logins != 1+expiries || st.Refused != expiries || c.obs.login(LoginSuccess) != 1+expiries {
				t.Fatalf("%d logins (observer %v), %d proxy answers; want %d and %d",
					st.Logins, c.obs.logins, st.Refused, 1+expiries, expiries)
			}
			if !strings.Contains(c.logs.String(), "not the API") {
				t.Fatalf("the re-login is not logged:\n%s", c.logs.String())
			}
		})
	}
}

// TestSSOProxySingleLogin: 40 callers meet the proxy's answer at once after
// each expiry; exactly one login happens and every call succeeds.
func TestSSOProxySingleLogin(t *testing.T) {
	for _, mode := range ssoModes {
		t.Run(string(mode), func(t *testing.T) {
			sim, clock := newSim(t, func(c *simulator.Config) {
				c.TokenLifetime = time.Minute
				c.SSOProxy = mode
			})
			c := newClient(t, sim.URL(), nil)
			ctx := ctxT(t)
			if err := c.login(ctx); err != nil {
				t.Fatal(err)
			}
			for round := range 3 {
				clock.Advance(time.Minute)
				before := sim.Stats().Logins
				var wg sync.WaitGroup
				errs := make(chan error, 40)
				for i := range 40 {
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
					t.Fatalf("round %d: %d logins after an expiry, want exactly 1", round, got)
				}
			}
		})
	}
}

// foreignConsole logs in normally and answers every monitor call with
// answer, counting logins and monitor calls.
type foreignConsole struct {
	logins, calls atomic.Int32
	URL           string
}

func newForeignConsole(t *testing.T, answer http.HandlerFunc) *foreignConsole {
	t.Helper()
	fc := &foreignConsole{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/login" {
			fc.logins.Add(1)
			_, _ = w.Write([]byte(`{"id":"T0kenT0kenT0kenT0kenT0kenT0kenT0kenT0kenT0kenT0kenT0kenT0kenAB12","userName":"exporter"}`))
			return
		}
		fc.calls.Add(1)
		answer(w, r)
	}))
	t.Cleanup(srv.Close)
	fc.URL = srv.URL
	return fc
}

// TestForeignAnswerPersists: when the fresh token gets the same foreign
// answer, it is the call's error, with the message a foreign answer always
// had, after exactly one new login and one retry. The hint to configure the
// redirect's target belongs to the login call only.
func TestForeignAnswerPersists(t *testing.T) {
	cases := []struct {
		name    string
		answer  http.HandlerFunc
		kind    Kind
		status  int
		want    string // in the error
		excerpt string
	}{
		{name: "login page", kind: KindMalformed, status: 200, want: "not a JSON object", excerpt: "Sign in",
			answer: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				_, _ = w.Write([]byte("<!DOCTYPE html><title>Sign in</title>"))
			}},
		{name: "plain text", kind: KindMalformed, status: 200, want: "not a JSON object", excerpt: "Session expired",
			answer: func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("Session expired")) }},
		{name: "empty body", kind: KindMalformed, status: 200, want: "listing",
			answer: func(w http.ResponseWriter, r *http.Request) {}},
		{name: "redirect", kind: KindRefused, status: http.StatusFound, want: `redirects the call to "/login"`,
			answer: func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/login", http.StatusFound) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fc := newForeignConsole(t, tc.answer)
			c := newClient(t, fc.URL, nil)
			_, err := c.events(ctxT(t), node1)
			e := checkError(t, err, tc.kind, endpointEvents)
			if e.Status != tc.status || !strings.Contains(e.Error(), tc.want) ||
				!strings.Contains(e.Error(), "even right after a new login") || !strings.Contains(e.Excerpt, tc.excerpt) {
				t.Fatalf("error %v (excerpt %q)", e, e.Excerpt)
			}
			if strings.Contains(e.Error(), "configure that URL") {
				t.Fatalf("a monitor call's redirect tells to configure the URL: %v", e)
			}
			if l, n := fc.logins.Load(), fc.calls.Load(); l != 2 || n != 2 {
				t.Fatalf("%d logins and %d calls; want 2 and 2 (one new login, one retry)", l, n)
			}
		})
	}
}

// TestForeignAnswerWithoutLogin: with authentication off there is no
// session to renew: the first foreign answer is the error, and a redirect
// is then rather a URL to fix.
func TestForeignAnswerWithoutLogin(t *testing.T) {
	fc := newForeignConsole(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://console.example/api/monitor/get/events", http.StatusMovedPermanently)
	})
	c := newClient(t, fc.URL, func(c *Config) { c.Username, c.Password = "", "" })
	_, err := c.events(ctxT(t), node1)
	e := checkError(t, err, KindRefused, endpointEvents)
	if !strings.Contains(e.Error(), "configure that URL instead") || fc.logins.Load() != 0 || fc.calls.Load() != 1 {
		t.Fatalf("error %v after %d logins, %d calls", e, fc.logins.Load(), fc.calls.Load())
	}
}

// TestJSONLabelledHTML: a JSON answer that only carries a wrong
// Content-Type is the API's answer all the same (no login, no retry).
func TestJSONLabelledHTML(t *testing.T) {
	fc := newForeignConsole(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("\n " + docListing))
	})
	c := newClient(t, fc.URL, nil)
	l, err := c.events(ctxT(t), node1)
	if err != nil || len(l.Reqs) != 2 {
		t.Fatalf("listing %+v, %v", l, err)
	}
	if fc.logins.Load() != 1 || fc.calls.Load() != 1 {
		t.Fatalf("%d logins, %d calls; want 1 and 1", fc.logins.Load(), fc.calls.Load())
	}
}

// TestForeignAnswerOnce: a proxy page that goes away after the new login
// costs one login and one retry, and the call succeeds; other errors
// (a malformed listing that is JSON up to its flaw) cause no login.
func TestForeignAnswerOnce(t *testing.T) {
	var pages atomic.Int32
	pages.Store(1)
	fc := newForeignConsole(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case pages.Add(-1) >= 0:
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<html>Sign in</html>"))
		case strings.HasSuffix(r.URL.Path, "/count/1/2"):
			_, _ = w.Write([]byte(`{"reqs":[,]}`))
		default:
			_, _ = w.Write([]byte(docListing))
		}
	})
	c := newClient(t, fc.URL, nil)
	ctx := ctxT(t)
	if l, err := c.events(ctx, node1); err != nil || len(l.Reqs) != 2 {
		t.Fatalf("listing %+v, %v", l, err)
	}
	if fc.logins.Load() != 2 || fc.calls.Load() != 2 {
		t.Fatalf("%d logins, %d calls; want 2 and 2", fc.logins.Load(), fc.calls.Load())
	}
	_, err := c.EventCount(ctx, node1, 1, 2)
	if kindOf(err) != KindMalformed || fc.logins.Load() != 2 || fc.calls.Load() != 3 {
		t.Fatalf("%v after %d logins, %d calls; want malformed, 2 and 3", err, fc.logins.Load(), fc.calls.Load())
	}
}
