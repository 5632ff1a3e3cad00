package faults

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// A console behind a single-sign-on proxy: once the session behind the
// token has expired, the proxy answers the calls with its login page (200
// text/html) or a redirect to it (302), never 401. The exporter logs in
// again once per expiry, every node stays up on every scrape, and the counts
// are exact across the expiries (listings capped, so polls page too).
func TestSSOProxySessionExpiry(t *testing.T) {
	for _, mode := range []simulator.SSOMode{simulator.SSOLoginPage, simulator.SSORedirect} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			const lifetime = 2 * time.Minute
			r := newRig(t, rigOpts{sim: simulator.Config{Seed: 16, Rate: 2,
				TokenLifetime: lifetime, SSOProxy: mode, Readings: simulator.Readings{ListingCap: 40}}})
			r.scrape()
			const scrapes, step = 24, 30 * time.Second
			for i := 0; i < scrapes; i++ {
				r.advance(step)
				s := r.scrape()
				for _, n := range r.nodes {
					if up, _ := s.value("indexima_up", node(n)); up != 1 {
						t.Fatalf("scrape %d: node %s down behind the SSO proxy", i, n)
					}
					r.checkNode(s, n)
				}
			}
			st := r.sim.Stats()
			expiries := int(scrapes * step / lifetime)
			if st.Refused < expiries {
				t.Fatalf("%d proxy answers for %d expiries: the lifetime did not bite, the case proves nothing", st.Refused, expiries)
			}
			if st.Logins > 1+expiries {
				t.Fatalf("%d logins over %d expiries; want at most %d (one at start, one per expiry)", st.Logins, expiries, 1+expiries)
			}
			if st.Requests["event_asc"] == 0 {
				t.Fatalf("no page of a listing was asked for: the listing cap did not bite")
			}
			tl := r.check(r.settle())
			t.Logf("SSO proxy (%s), %d expiries: %d logins, %d proxy answers; %s", mode, expiries, st.Logins, st.Refused, tl)
		})
	}
}

// The proxy's login page meets a poll between the count and a page of the
// listing, and a new login does not cure it (the proxy is broken for those
// calls): every poll that needs a page applies nothing (counters and cursor
// stay), the node is down, and once the proxy is fixed the events of the meantime are counted
// exactly once. Each failed call costs at most one new login.
func TestSSOProxyPageMidPoll(t *testing.T) {
	var broken atomic.Bool
	var pages atomic.Int32
	front := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if broken.Load() && strings.Contains(req.URL.Path, "/get/event/asc/") {
				pages.Add(1)
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				_, _ = io.WriteString(w, "<!DOCTYPE html><html><title>Sign in</title><form action=\"/login\"></form></html>")
				return
			}
			h.ServeHTTP(w, req)
		})
	}
	r := newRig(t, rigOpts{front: front, sim: simulator.Config{Seed: 17, Rate: 4, Readings: simulator.Readings{ListingCap: 30}}})
	r.scrape()
	r.run(2, 30*time.Second)
	broken.Store(true)
	before := r.sim.Stats()
	// The first poll's lastevents listing is cut at the cap: it may count
	// what it shows and leave the rest to the next poll's page (or search
	// at once, and fail). From then on every poll needs a page.
	held := r.run(1, 30*time.Second)
	for i := 0; i < 3; i++ {
		r.advance(30 * time.Second) // ~120 events per node, 30 per listing: every poll pages
		s := r.scrape()
		for _, n := range r.nodes {
			if up, _ := s.value("indexima_up", node(n)); up != 0 {
				t.Fatalf("scrape %d: node %s up though its paging got the login page", i, n)
			}
			cur, _ := s.value("indexima_events_cursor_timestamp_seconds", node(n))
			was, _ := held.value("indexima_events_cursor_timestamp_seconds", node(n))
			got := s.byLabel("indexima_events_total", node(n), "event")
			for ev, v := range held.byLabel("indexima_events_total", node(n), "event") {
				if got[ev] != v {
					t.Fatalf("scrape %d: node %s: %s moved %v -> %v in a failed poll", i, n, ev, v, got[ev])
				}
			}
			if cur != was {
				t.Fatalf("scrape %d: node %s: cursor moved %v -> %v in a failed poll", i, n, was, cur)
			}
		}
	}
	after := r.sim.Stats()
	if after.Requests["event_count"] == before.Requests["event_count"] || pages.Load() == 0 {
		t.Fatalf("the count (%d calls) or the page (%d answers) never came: the case proves nothing",
			after.Requests["event_count"]-before.Requests["event_count"], pages.Load())
	}
	if n := after.Logins - before.Logins; n > int(pages.Load()) {
		t.Fatalf("%d logins for %d login pages: more than one per failed call", n, pages.Load())
	}
	broken.Store(false)
	tl := r.check(r.settle())
	t.Logf("login page mid-poll: %d pages, %d logins; %s", pages.Load(), after.Logins-before.Logins, tl)
}
