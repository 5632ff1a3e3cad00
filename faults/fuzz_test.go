package faults

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	promconfig "github.com/prometheus/common/config"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
	"github.com/indexima-exporter/indexima_exporter/collector"
	"github.com/indexima-exporter/indexima_exporter/event"
	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/poller"
	"github.com/indexima-exporter/indexima_exporter/store"
	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// cannedConsole answers every call, login included, with the same body.
type cannedConsole struct {
	mu     sync.Mutex
	body   []byte
	gz     bool
	status int
}

func (c *cannedConsole) set(body []byte, gz bool, status int) {
	c.mu.Lock()
	c.body, c.gz, c.status = body, gz, status
	c.mu.Unlock()
}

func (c *cannedConsole) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	body, gz, status := c.body, c.gz, c.status
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if gz {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		_, _ = zw.Write(body) // into a bytes.Buffer: cannot fail
		zw.Close()
		body = b.Bytes()
		w.Header().Set("Content-Encoding", "gzip")
	}
	w.WriteHeader(status)
	w.Write(body)
}

// Whatever a console (or a proxy in front of it) answers, to any call, the
// client returns a typed *apiclient.Error or a value, never panics, and its
// errors never hold the password. The decoders' own fuzz targets live in
// apiclient; this one goes through the HTTP client as the exporter does.
func FuzzConsoleAnswers(f *testing.F) {
	for _, s := range []string{
		`{"id":"` + strings.Repeat("a", 64) + `","userName":"exporter"}`,
		`{"reqs":[{"type":"TABLE_LOADED","date":1,"duration":2,"comment":"x"}],"runnings":[],"last":3}`,
		`{"version":"2024.1.0"}`, `12`, `[{"name":"a","type":"int"}]`,
		`{"message":"No session attribute found"}`, `<html><body>502 Bad Gateway</body></html>`,
		`{"reqs":[`, `{"rows":[1],"total":1}`, `null`, ``, "\xff\xfe", `{"last":-1}`,
	} {
		f.Add([]byte(s), false, uint16(200))
		f.Add([]byte(s), true, uint16(200))
	}
	f.Add([]byte(`{"message":"x"}`), false, uint16(401))
	f.Add([]byte(`oops`), true, uint16(502))
	console := &cannedConsole{}
	srv := httptest.NewServer(console)
	f.Cleanup(srv.Close)
	const secret = "fuzz-Secret-pw-77"
	f.Fuzz(func(t *testing.T, body []byte, gz bool, status uint16) {
		st := int(status)
		if st < 200 || st > 599 {
			st = 200
		}
		console.set(body, gz, st)
		c, err := apiclient.New(apiclient.Config{URL: srv.URL, Username: user, Password: promconfig.Secret(secret),
			Timeout: 2 * time.Second, MaxBodyBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseIdleConnections()
		ctx := context.Background()
		nd := apiclient.Node{Host: "core-1", Port: 9999}
		check := func(what string, err error) {
			if err == nil {
				return
			}
			var ae *apiclient.Error
			if !errors.As(err, &ae) {
				t.Errorf("%s: untyped error %T: %v", what, err, err)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("%s: error holds the password", what)
			}
		}
		// The first call logs in (lazily, as the exporter's do): a login's
		// error is that call's.
		_, err = c.Version(ctx, nd)
		check("version", err)
		_, err = c.Columns(ctx, nd, "sales.orders")
		check("columns", err)
		_, err = c.EventCount(ctx, nd, 0, 1)
		check("count", err)
		_, err = c.StreamListing(ctx, nd, event.Since(0), nopHandler{})
		check("lastevents", err)
	})
}

// nopHandler takes a listing's events and keeps none.
type nopHandler struct{}

func (nopHandler) Event(event.Event) error   { return nil }
func (nopHandler) Running(event.Event) error { return nil }

// A state file is read at start: whatever it holds (a truncated write of
// an older version, another program's JSON, garbage), the store migrates
// it, sets it aside or restores it, or refuses a newer version's store
// (changing nothing), never panics, and what it restored is written back
// and reads again. The seed is a real state of format 2 as
// an exporter wrote it after polling the simulator. This target reads the
// file as a whole; polling a restored node state is fuzzed in-process by
// tracker.FuzzReadState (no socket, no goroutine, so that the fuzzer
// explores at thousands of executions a second).
func FuzzReadStateFile(f *testing.F) {
	clock := simulator.NewManualClock(epoch)
	sim := simulator.New(simulator.Config{Clock: clock, Seed: 21, Rate: 2,
		Nodes: []simulator.NodeConfig{{Host: "core-1"}, {Host: "core-2"}}})
	if err := sim.Start("127.0.0.1:0"); err != nil {
		f.Fatal(err)
	}
	client, err := apiclient.New(apiclient.Config{URL: sim.URL()})
	if err != nil {
		f.Fatal(err)
	}
	clusters := []poller.Cluster{{Client: client, Nodes: []poller.Node{
		{Target: apiclient.Node{Host: "core-1", Port: 9999}}, {Target: apiclient.Node{Host: "core-2", Port: 9999}}}}}
	polls := poller.New(poller.Options{})
	exp, err := collector.New(polls, collector.Options{})
	if err != nil {
		f.Fatal(err)
	}
	polls.SetClusters(clusters)
	reg := prometheus.NewRegistry()
	reg.MustRegister(exp)
	for i := 0; i < 3; i++ {
		if _, err := reg.Gather(); err != nil {
			f.Fatal(err)
		}
		clock.Advance(time.Minute)
	}
	format2 := map[string]any{"version": 2, "nodes": map[string]*tracker.State{}}
	for _, n := range polls.NodeStates() {
		format2["nodes"].(map[string]*tracker.State)[n.Key] = n.State()
	}
	saved, err := json.Marshal(format2)
	if err != nil {
		f.Fatal(err)
	}
	client.CloseIdleConnections()
	sim.Close() // the fuzzing itself makes no call
	f.Add(saved)
	f.Add(saved[:len(saved)/2])
	f.Add([]byte(`{"version":1,"nodes":{"/core-1:9999":{"contacted":true,"cursor":-5,"seen":{"floor":9e18}}}}`))
	f.Add([]byte(`{"version":1,"nodes":{"/core-1:9999":null}}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"format":3,"nodes_dir":"state.json.d","nodes":{"/core-1:9999":"core-1"}}`))
	f.Add([]byte(`{"version":1,"nodes":{"/core-1:9999":{"contacted":true,"durations":{"TABLE_LOADED":null},"pending":{"x":{"n":-3}},"events":{"TABLE_LOADED":1}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "state.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		fresh := poller.New(poller.Options{})
		fresh.SetClusters(clusters)
		st, o, err := store.Open(path)
		if newer := (*store.NewerError)(nil); errors.As(err, &newer) {
			if b, rerr := os.ReadFile(path); rerr != nil || !bytes.Equal(b, data) {
				t.Errorf("refused (%v), but the file changed (%v)", err, rerr)
			}
			return
		}
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		restored := fresh.Restore(o.States)
		var nodes []store.Node
		for _, n := range fresh.NodeStates() {
			nodes = append(nodes, store.Node{Key: n.Key, State: n.State})
		}
		if _, err := st.SaveAll(nodes); err != nil {
			t.Errorf("SaveAll after a restore: %v", err)
		}
		st.Close() // as at the end of a process: the lock released
		st, o, err = store.Open(path)
		if err != nil || o.Unusable != nil || len(o.Damaged) != 0 || len(o.States) != restored {
			t.Errorf("a state written back does not read: %v, %+v, %d restored before", err, o, restored)
		}
		if st != nil {
			st.Close()
		}
	})
}
