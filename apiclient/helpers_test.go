package apiclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"
	promconfig "github.com/prometheus/common/config"

	"github.com/indexima-exporter/indexima_exporter/event"
	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

const (
	testUser     = "exporter"
	testPassword = "pa55-w0rd-never-shown"
)

// simStart is the simulated "now" of every test: mid-day, so that today's
// listing holds the initial history.
var simStart = time.Date(2026, 11, 22, 14, 0, 0, 0, time.UTC)

// newSim starts a simulator with two nodes and a manual clock on loopback.
func newSim(t testing.TB, mod func(*simulator.Config)) (*simulator.Simulator, *simulator.ManualClock) {
	t.Helper()
	clock := simulator.NewManualClock(simStart)
	cfg := simulator.Config{
		Users: map[string]string{testUser: testPassword},
		Nodes: []simulator.NodeConfig{{Host: "node1.example", Port: 9999, Version: "2024.1.7"},
			{Host: "node2.example", Port: 9999}},
		Clock: clock,
		Seed:  7,
	}
	if mod != nil {
		mod(&cfg)
	}
	sim := simulator.New(cfg)
	if err := sim.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	return sim, clock
}

var (
	node1 = Node{Host: "node1.example", Port: 9999}
	node2 = Node{Host: "node2.example"} // port 0: the default 9999
)

// recordingObserver keeps what the client reported.
type recordingObserver struct {
	mu       sync.Mutex
	requests []string // endpoint + " " + code
	logins   map[string]int
	skipped  int // calls failed on the login backoff
}

func (o *recordingObserver) ObserveRequest(endpoint, code string, d time.Duration) {
	o.mu.Lock()
	o.requests = append(o.requests, endpoint+" "+code)
	o.mu.Unlock()
}

func (o *recordingObserver) ObserveLogin(result string) {
	o.mu.Lock()
	if o.logins == nil {
		o.logins = map[string]int{}
	}
	o.logins[result]++
	o.mu.Unlock()
}

func (o *recordingObserver) ObserveLoginSkipped() {
	o.mu.Lock()
	o.skipped++
	o.mu.Unlock()
}

func (o *recordingObserver) skips() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.skipped
}

func (o *recordingObserver) login(result string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.logins[result]
}

func (o *recordingObserver) saw(req string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, r := range o.requests {
		if r == req {
			return true
		}
	}
	return false
}

type testClient struct {
	*Client
	obs  *recordingObserver
	logs *testkit.SyncBuffer
}

// newClient builds a client for url; mod adjusts the config.
func newClient(t testing.TB, url string, mod func(*Config)) testClient {
	t.Helper()
	obs := &recordingObserver{}
	logs := &testkit.SyncBuffer{}
	cfg := Config{URL: url, Username: testUser, Password: promconfig.Secret(testPassword),
		Timeout: 5 * time.Second, Observer: obs, Logger: log.NewLogfmtLogger(logs),
		LogCalls: true} // every call's line, for the tests that read the logs (secrets)
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return testClient{Client: c, obs: obs, logs: logs}
}

// recorded is a request as the console received it.
type recorded struct {
	uri    string
	header http.Header
}

// headerRecorder serves h on loopback and keeps every request's URI and
// headers, to check what the client sends.
type headerRecorder struct {
	mu   sync.Mutex
	reqs []recorded
	URL  string
}

func recordRequests(t testing.TB, h http.Handler) *headerRecorder {
	t.Helper()
	rec := &headerRecorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, recorded{uri: r.RequestURI, header: r.Header.Clone()})
		rec.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	rec.URL = srv.URL
	return rec
}

func (r *headerRecorder) all() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.reqs...)
}

// expectedReqs is the ground truth of a listing's reqs: events of the node
// that started in [lo, hi] and have completed by now (spec 2.3, 4.4).
func expectedReqs(truth []simulator.Event, lo, hi, now int64) []event.Event {
	var out []event.Event
	for _, e := range truth {
		if e.Date >= lo && e.Date <= hi && e.CompletedAt <= now {
			out = append(out, event.Event{Type: e.Type, Date: e.Date, Duration: e.Duration, HasDuration: true, Comment: e.Comment})
		}
	}
	return out
}

func sortEvents(evs []event.Event) []event.Event {
	out := append([]event.Event(nil), evs...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Date != out[j].Date {
			return out[i].Date < out[j].Date
		}
		if out[i].Type != out[j].Type {
			return out[i].Type < out[j].Type
		}
		return out[i].Comment < out[j].Comment
	})
	return out
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func itoa(n int) string { return strconv.Itoa(n) }
