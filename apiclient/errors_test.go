package apiclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/event"
	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// checkError asserts the kind and the context of err.
func checkError(t *testing.T, err error, kind Kind, endpoint string) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Kind != kind {
		t.Fatalf("got %T %v, want *Error of kind %s", err, err, kind)
	}
	if e.Endpoint != endpoint {
		t.Fatalf("endpoint %q, want %q (%v)", e.Endpoint, endpoint, err)
	}
	if len(e.Excerpt) > maxExcerptBytes {
		t.Fatalf("excerpt of %d bytes", len(e.Excerpt))
	}
	return e
}

// wantError is checkError where the test needs nothing more of the error.
func wantError(t *testing.T, err error, kind Kind, endpoint string) {
	t.Helper()
	_ = checkError(t, err, kind, endpoint)
}

// kindOf returns the Kind of an *Error in err's chain, or 0 when there is
// none (for example an error returned by an event.Handler).
func kindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

func TestBadCredentials(t *testing.T) {
	for _, status := range []int{401, 403, 200} {
		t.Run(itoa(status), func(t *testing.T) {
			sim, _ := newSim(t, func(c *simulator.Config) { c.RefusalStatus = status })
			c := newClient(t, sim.URL(), func(c *Config) { c.Password = "wrong" })
			_, err := c.events(ctxT(t), node1)
			e := checkError(t, err, KindBadCredentials, EndpointLogin)
			if !strings.Contains(e.Error(), "Bad credentials") || !strings.Contains(e.Error(), testUser) {
				t.Fatalf("unclear error: %v", e)
			}
			if c.obs.login(LoginFailure) != 1 {
				t.Fatalf("login results %v", c.obs.logins)
			}
		})
	}
}

func TestConsoleUnreachable(t *testing.T) {
	t.Run("closed port", func(t *testing.T) {
		c := newClient(t, refusingURL(t), nil)
		_, err := c.Version(ctxT(t), node1)
		wantError(t, err, KindConsoleUnreachable, EndpointLogin)
		if c.obs.login(LoginError) != 1 || !c.obs.saw("login error") {
			t.Fatalf("observer: %v %v", c.obs.requests, c.obs.logins)
		}
	})
	t.Run("closed port without login", func(t *testing.T) {
		c := newClient(t, refusingURL(t), func(c *Config) { c.Username, c.Password = "", "" })
		_, err := c.events(ctxT(t), node1)
		e := checkError(t, err, KindConsoleUnreachable, endpointEvents)
		if e.Node != "node1.example:9999" || !c.obs.saw("events error") {
			t.Fatalf("node %q, observer %v", e.Node, c.obs.requests)
		}
	})
	t.Run("console down", func(t *testing.T) {
		sim, _ := newSim(t, nil)
		c := newClient(t, sim.URL(), nil)
		if err := c.login(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		sim.SetConsoleFault(simulator.Fault{Down: true})
		_, err := c.EventCount(ctxT(t), node1, 0, 1)
		wantError(t, err, KindConsoleUnreachable, EndpointEventCount)
	})
	t.Run("login hangs", func(t *testing.T) {
		sim, _ := newSim(t, nil)
		sim.SetConsoleFault(simulator.Fault{Hang: true})
		c := newClient(t, sim.URL(), func(c *Config) { c.Timeout = 200 * time.Millisecond })
		_, err := c.events(ctxT(t), node1)
		e := checkError(t, err, KindConsoleUnreachable, EndpointLogin)
		if !errors.Is(e, context.DeadlineExceeded) {
			t.Fatalf("timeout not in the chain: %v", e)
		}
	})
	t.Run("login 5xx", func(t *testing.T) {
		sim, _ := newSim(t, nil)
		sim.SetConsoleFault(simulator.Fault{Status: 503})
		c := newClient(t, sim.URL(), nil)
		_, err := c.events(ctxT(t), node1)
		if e := checkError(t, err, KindConsoleUnreachable, EndpointLogin); e.Status != 503 {
			t.Fatalf("status %d", e.Status)
		}
	})
}

func TestNodeUnreachable(t *testing.T) {
	sim, _ := newSim(t, nil)
	c := newClient(t, sim.URL(), func(c *Config) { c.Timeout = 300 * time.Millisecond })
	ctx := ctxT(t)
	if err := c.login(ctx); err != nil {
		t.Fatal(err)
	}
	sim.SetNodeFault(node1.String(), simulator.Fault{Status: 502})
	_, err := c.events(ctx, node1)
	if e := checkError(t, err, KindNodeUnreachable, endpointEvents); e.Status != 502 || e.Node != node1.String() || e.Excerpt == "" {
		t.Fatalf("error %#v", e)
	}
	if !c.obs.saw("events 502") {
		t.Fatalf("observer: %v", c.obs.requests)
	}

	sim.SetNodeFault(node1.String(), simulator.Fault{Hang: true})
	_, err = c.Version(ctx, node1)
	e := checkError(t, err, KindNodeUnreachable, EndpointVersion)
	if !errors.Is(e, context.DeadlineExceeded) {
		t.Fatalf("timeout not in the chain: %v", e)
	}
	// The other node still answers.
	if _, err := c.Version(ctx, node2); err != nil {
		t.Fatal(err)
	}

	// An unknown node: the simulated console answers 502 "cannot reach node".
	_, err = c.Version(ctx, Node{Host: "nowhere.example", Port: 1})
	wantError(t, err, KindNodeUnreachable, EndpointVersion)
}

func TestMalformedBodies(t *testing.T) {
	kinds := map[string]simulator.BadBody{
		"malformed json": simulator.BodyMalformedJSON,
		"truncated gzip": simulator.BodyTruncatedGzip,
		"wrong shape":    simulator.BodyWrongShape,
		"html":           simulator.BodyHTML,
		"bomb":           simulator.BodyBomb,
		"endless":        simulator.BodyEndless,
		"message":        simulator.BodyMessage,
	}
	for name, kind := range kinds {
		for _, gzip := range []bool{true, false} {
			if kind == simulator.BodyBomb && !gzip {
				continue // the bomb is gzip whatever was asked
			}
			t.Run(name+map[bool]string{true: " gzip", false: " plain"}[gzip], func(t *testing.T) {
				sim, _ := newSim(t, nil)
				c := newClient(t, sim.URL(), func(c *Config) {
					// A small limit keeps the bomb and the endless body
					// quick under -race on a busy machine: the limit
					// logic is the same whatever its value.
					if kind == simulator.BodyEndless || kind == simulator.BodyBomb {
						c.MaxBodyBytes = 4 << 20
					}
				})
				c.noGzip = !gzip
				ctx := ctxT(t)
				sim.SetNodeFault(node1.String(), simulator.Fault{Body: kind})
				_, err := c.events(ctx, node1)
				e := checkError(t, err, KindMalformed, endpointEvents)
				if e.Status != http.StatusOK || e.Node != node1.String() {
					t.Fatalf("error %#v", e)
				}
				switch kind {
				case simulator.BodyBomb:
					if !strings.Contains(e.Error(), "limit of 4 MiB") {
						t.Fatalf("the bomb's error does not name the limit: %v", e)
					}
				case simulator.BodyEndless:
					if !strings.Contains(e.Error(), "limit of 4 MiB") {
						t.Fatalf("the endless body's error does not name the limit: %v", e)
					}
				case simulator.BodyHTML:
					if !strings.Contains(e.Excerpt, "502 Bad Gateway") {
						t.Fatalf("excerpt %q", e.Excerpt)
					}
				case simulator.BodyMessage:
					if !strings.Contains(e.Error(), "node did not answer") {
						t.Fatalf("message not shown: %v", e)
					}
				}
				// The count call too, except for the wrong shape: its
				// {"rows":[...],"total":1} holds exactly one number, which
				// is a shape the count decoder accepts by design.
				if kind != simulator.BodyWrongShape {
					_, err = c.EventCount(ctx, node1, 0, 1)
					wantError(t, err, KindMalformed, EndpointEventCount)
				}
				// The client is not stuck: without the fault all is well.
				sim.ClearFaults()
				if _, err := c.events(ctx, node1); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

func TestRefused(t *testing.T) {
	sim, _ := newSim(t, nil)
	c := newClient(t, sim.URL(), nil)
	ctx := ctxT(t)
	_, err := c.Columns(ctx, node1, "no_such.table")
	if e := checkError(t, err, KindRefused, EndpointColumns); e.Status != 404 || !strings.Contains(e.Error(), "Table not found") {
		t.Fatalf("error %v", e)
	}
	_, err = c.eventRange(ctx, node1, event.Order("sideways"), 0, 1, 1)
	wantError(t, err, KindRefused, EndpointEventAsc)
	_, err = c.Version(ctx, Node{})
	wantError(t, err, KindRefused, EndpointVersion)
}

// TestBombDoesNotExpandInMemory: the simulator's gzip bomb (10 GiB of
// spaces) is refused at the 64 MiB limit while the process allocates far
// less than that limit.
func TestBombDoesNotExpandInMemory(t *testing.T) {
	sim, _ := newSim(t, nil)
	// Reading 64 MiB under -race on a loaded machine can take seconds: the
	// timeout must not win the race against the limit this test is about.
	c := newClient(t, sim.URL(), func(c *Config) { c.Timeout = 2 * time.Minute })
	ctx := ctxT(t)
	if err := c.login(ctx); err != nil {
		t.Fatal(err)
	}
	sim.SetNodeFault(node1.String(), simulator.Fault{Body: simulator.BodyBomb})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := c.events(ctx, node1)
	runtime.ReadMemStats(&after)
	e := checkError(t, err, KindMalformed, endpointEvents)
	if !strings.Contains(e.Error(), "limit of 64 MiB") {
		t.Fatalf("unclear error: %v", e)
	}
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 16<<20 {
		t.Fatalf("%d MiB allocated while refusing the bomb", grown>>20)
	}
}

// An error body's excerpt is in Error() once, as the console sent it (its
// control characters made visible by sanitize), not quoted again: a JSON
// body keeps its own quotes and backslashes, single.
func TestErrorShowsTheBodyOnce(t *testing.T) {
	const body = "{\"message\": \"node \\\"a\\\" says C:\\\\x\"}\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = io.WriteString(w, body) // the client reads what arrives
	}))
	defer srv.Close()
	c := newClient(t, srv.URL, func(c *Config) { c.Username, c.Password = "", "" })
	_, err := c.Version(ctxT(t), node1)
	e := checkError(t, err, KindNodeUnreachable, EndpointVersion)
	want := `(body: {"message": "node \"a\" says C:\\x"}\n)`
	if !strings.HasSuffix(e.Error(), want) {
		t.Errorf("Error()\n got %s\nwant it to end with %s", e.Error(), want)
	}
}
