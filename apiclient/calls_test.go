package apiclient

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/event"
	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// TestCallsAgainstSimulator runs every call against the simulator over real
// HTTP, with gzip answers and with plain ones, and checks the results
// against the simulator's ground truth.
func TestCallsAgainstSimulator(t *testing.T) {
	for _, gzip := range []bool{true, false} {
		name := "gzip"
		if !gzip {
			name = "plain"
		}
		t.Run(name, func(t *testing.T) {
			sim, clock := newSim(t, nil)
			rec := recordRequests(t, sim.Handler())
			c := newClient(t, rec.URL, nil)
			c.noGzip = !gzip
			ctx := ctxT(t)
			key := node1.String()
			now := clock.Now().UnixMilli()
			truth := sim.Truth(key)

			v, err := c.Version(ctx, node1)
			if err != nil || v.Version != "2024.1.7" || !strings.Contains(v.Raw, "2024.1.7") {
				t.Fatalf("version: %+v, %v", v, err)
			}

			tables := sim.Tables(key)
			if len(tables) == 0 {
				t.Fatal("the simulator has no tables")
			}
			cols, err := c.Columns(ctx, node1, tables[0])
			if err != nil || cols.Count <= 0 || cols.Count != len(cols.Columns) || cols.Columns[0] == "" {
				t.Fatalf("columns of %s: %+v, %v", tables[0], cols, err)
			}

			dayStart := time.Date(simStart.Year(), simStart.Month(), simStart.Day(), 0, 0, 0, 0, time.UTC).UnixMilli()
			dayEnd := dayStart + 24*3600*1000 - 1
			wantToday := sortEvents(expectedReqs(truth, dayStart, dayEnd, now))
			if len(wantToday) == 0 {
				t.Fatal("the simulator has no history today")
			}
			l, err := c.events(ctx, node1)
			if err != nil {
				t.Fatalf("events: %v", err)
			}
			if got := sortEvents(l.Reqs); !sameEvents(got, wantToday) {
				t.Fatalf("events: got %d reqs, want %d\n got %+v\nwant %+v", len(got), len(wantToday), got, wantToday)
			}
			if !l.HasLast || l.Last != now {
				t.Fatalf("events: last %d/%v, want %d", l.Last, l.HasLast, now)
			}

			l, err = c.eventsOn(ctx, node1, simStart)
			if err != nil || !sameEvents(sortEvents(l.Reqs), wantToday) {
				t.Fatalf("events on %s: %d reqs, %v", simStart.Format(time.DateOnly), len(l.Reqs), err)
			}

			since := wantToday[len(wantToday)/2].Date
			l, err = c.lastEvents(ctx, node1, since)
			if err != nil {
				t.Fatalf("lastevents: %v", err)
			}
			wantSince := sortEvents(expectedReqs(truth, since, now, now))
			if got := sortEvents(l.Reqs); !sameEvents(got, wantSince) {
				t.Fatalf("lastevents since %d: got %d events, want %d", since, len(got), len(wantSince))
			}

			const limit = 3
			asc, err := c.eventRange(ctx, node1, event.Asc, dayStart, now, limit)
			if err != nil || len(asc.Reqs) != min(limit, len(wantToday)) {
				t.Fatalf("asc: %d events, %v", len(asc.Reqs), err)
			}
			desc, err := c.eventRange(ctx, node1, event.Desc, dayStart, now, limit)
			if err != nil || len(desc.Reqs) != min(limit, len(wantToday)) {
				t.Fatalf("desc: %d events, %v", len(desc.Reqs), err)
			}
			for i := 1; i < len(asc.Reqs); i++ {
				if asc.Reqs[i].Date < asc.Reqs[i-1].Date || desc.Reqs[i].Date > desc.Reqs[i-1].Date {
					t.Fatalf("order broken: asc %+v desc %+v", asc.Reqs, desc.Reqs)
				}
			}
			if asc.Reqs[0].Date != wantToday[0].Date || desc.Reqs[0].Date != wantToday[len(wantToday)-1].Date {
				t.Fatalf("asc starts at %d, desc at %d; want %d and %d", asc.Reqs[0].Date, desc.Reqs[0].Date,
					wantToday[0].Date, wantToday[len(wantToday)-1].Date)
			}

			n, err := c.EventCount(ctx, node1, dayStart, dayEnd)
			if err != nil || n != int64(len(wantToday)) {
				t.Fatalf("count: %d, %v; want %d", n, err, len(wantToday))
			}

			// Node 2 by its default port: a separate event log.
			l2, err := c.events(ctx, node2)
			want2 := sortEvents(expectedReqs(sim.Truth(node2.String()), dayStart, dayEnd, now))
			if err != nil || !sameEvents(sortEvents(l2.Reqs), want2) {
				t.Fatalf("node2 events: %d, %v; want %d", len(l2.Reqs), err, len(want2))
			}

			// What went over the wire.
			for _, r := range rec.all() {
				h := r.header
				// gzip is asked for every answer, a count's too: the field
				// notes require Accept-Encoding: gzip of a client.
				if gzip != (h.Get("Accept-Encoding") == "gzip") {
					t.Errorf("%s: Accept-Encoding %q", r.uri, h.Get("Accept-Encoding"))
				}
				if r.uri == "/api/login" {
					if h.Get("Content-Type") != "application/json" || h.Get("Authorization") != "" {
						t.Errorf("login headers: %v", h)
					}
					continue
				}
				if a := h.Get("Authorization"); a == "" || strings.Contains(a, " ") {
					t.Errorf("%s: Authorization %q is not a bare token", r.uri, a)
				}
				if h.Get("Monitor-Target-Host") == "" || h.Get("Monitor-Target-Port") != "9999" {
					t.Errorf("%s: node headers %q:%q", r.uri, h.Get("Monitor-Target-Host"), h.Get("Monitor-Target-Port"))
				}
			}
			if st := sim.Stats(); st.Logins != 1 {
				t.Fatalf("%d logins for one session", st.Logins)
			}
			if !c.obs.saw("event_count 200") || !c.obs.saw("login 200") || c.obs.login(LoginSuccess) != 1 {
				t.Fatalf("observer saw %v, logins %v", c.obs.requests, c.obs.logins)
			}
		})
	}
}

// TestRequestPaths checks the paths the client builds: the escaped table
// segment and the date from the date's own calendar day.
func TestRequestPaths(t *testing.T) {
	sim, _ := newSim(t, nil)
	rec := recordRequests(t, sim.Handler())
	c := newClient(t, rec.URL, nil)
	ctx := ctxT(t)

	_, err := c.Columns(ctx, node1, "odd/ta ble?x")
	if kindOf(err) != KindRefused {
		t.Fatalf("unknown table: %v", err)
	}
	// 00:30 at UTC+05:00 is still the previous day in UTC: the path must
	// carry the date's own day.
	east := time.FixedZone("UTC+5", 5*3600)
	if _, err := c.eventsOn(ctx, node1, time.Date(2026, 11, 22, 0, 30, 0, 0, east)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.lastEvents(ctx, node1, 1627450023823); err != nil {
		t.Fatal(err)
	}
	if _, err := c.eventRange(ctx, node1, event.Desc, 1, 2, 5); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"/api/monitor/get/columns/odd%2Fta%20ble%3Fx",
		"/api/monitor/get/events/2026-11-22",
		"/api/monitor/get/lastevents/1627450023823",
		"/api/monitor/get/event/desc/1/2/5",
	}
	var got []string
	for _, r := range rec.all() {
		if r.uri != "/api/login" {
			got = append(got, r.uri)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("paths:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestStreamListingDelivers checks the streaming call and its counts.
func TestStreamListingDelivers(t *testing.T) {
	sim, clock := newSim(t, nil)
	// A running event: started now, completes in a minute.
	sim.Append(node1.String(), simulator.Event{Type: simulator.TableLoaded, Date: clock.Now().UnixMilli(),
		Duration: 60000, Comment: "sales.big"})
	c := newClient(t, sim.URL(), nil)
	h := &collector{}
	info, err := c.stream(ctxT(t), dayRequest(node1, time.Time{}), h)
	if err != nil {
		t.Fatal(err)
	}
	if info.Reqs != len(h.l.Reqs) || info.Runnings != len(h.l.Runnings) || info.Reqs == 0 {
		t.Fatalf("info %+v, delivered %d/%d", info, len(h.l.Reqs), len(h.l.Runnings))
	}
	found := false
	for _, e := range h.l.Runnings {
		if e.Comment == "sales.big" && e.Type == simulator.TableLoaded {
			found = true
		}
	}
	if !found {
		t.Fatalf("running event not delivered: %+v", h.l.Runnings)
	}
}

// TestNoCredentials: authentication disabled means no login and no
// Authorization header.
func TestNoCredentials(t *testing.T) {
	sim, _ := newSim(t, func(c *simulator.Config) { c.Users = nil })
	rec := recordRequests(t, sim.Handler())
	c := newClient(t, rec.URL, func(c *Config) { c.Username, c.Password = "", "" })
	ctx := ctxT(t)
	if err := c.login(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.events(ctx, node1); err != nil {
		t.Fatal(err)
	}
	if _, err := c.EventCount(ctx, node1, 0, time.Now().UnixMilli()); err != nil {
		t.Fatal(err)
	}
	reqs := rec.all()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	for _, r := range reqs {
		if _, has := r.header["Authorization"]; has || r.uri == "/api/login" {
			t.Fatalf("request %s with Authorization %q", r.uri, r.header.Get("Authorization"))
		}
	}
	if st := sim.Stats(); st.Logins+st.LoginFailures != 0 {
		t.Fatalf("%d logins", st.Logins+st.LoginFailures)
	}
}

// TestCancelledByCaller: a call the caller cancels returns an error wrapping
// context.Canceled.
func TestCancelledByCaller(t *testing.T) {
	sim, _ := newSim(t, nil)
	c := newClient(t, sim.URL(), nil)
	if err := c.login(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	sim.SetNodeFault(node1.String(), simulator.Fault{Hang: true})
	before := sim.Stats().NodeRequests[node1.String()]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := c.events(ctx, node1); done <- err }()
	testkit.WaitFor(t, "the call to reach the node", func() bool { return sim.Stats().NodeRequests[node1.String()] > before })
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled in the chain", err)
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("not an *Error: %T", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not return after cancellation")
	}
}

// Every call is logged at debug level when LogCalls is set, and not at all
// otherwise (the exporter sets it at --log.level=debug only).
func TestCallLinesOnlyWithLogCalls(t *testing.T) {
	for _, on := range []bool{true, false} {
		sim, _ := newSim(t, nil)
		srv := httptest.NewServer(sim.Handler())
		t.Cleanup(srv.Close)
		c := newClient(t, srv.URL, func(cfg *Config) { cfg.LogCalls = on })
		if _, err := c.Version(ctxT(t), node1); err != nil {
			t.Fatal(err)
		}
		lines := strings.Count(c.logs.String(), `msg="console request"`)
		if on && lines != 2 || !on && lines != 0 { // the login and the version
			t.Errorf("LogCalls %t: %d call lines in the log:\n%s", on, lines, c.logs.String())
		}
	}
}
