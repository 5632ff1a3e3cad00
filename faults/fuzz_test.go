package faults

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	promconfig "github.com/prometheus/common/config"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
	"github.com/indexima-exporter/indexima_exporter/collector"
	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
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
		zw.Write(body)
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
		check("login", c.Login(ctx))
		_, err = c.Version(ctx, nd)
		check("version", err)
		_, err = c.Columns(ctx, nd, "sales.orders")
		check("columns", err)
		_, err = c.EventCount(ctx, nd, 0, 1)
		check("count", err)
		_, err = c.LastEvents(ctx, nd, 0)
		check("lastevents", err)
	})
}

// A state file is read at start: whatever it holds (a truncated write of
// an older version, another program's JSON, garbage), ReadState returns an
// error or restores, never panics, and what it restored is written back. The
// seed is a real state written by an exporter that polled the simulator.
// This target reads the file as a whole; polling a restored node state is
// fuzzed in-process by tracker.FuzzReadState (no socket, no goroutine, so
// that the fuzzer explores at thousands of executions a second).
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
	clusters := []collector.Cluster{{Client: client, Nodes: []collector.Node{
		{Target: apiclient.Node{Host: "core-1", Port: 9999}}, {Target: apiclient.Node{Host: "core-2", Port: 9999}}}}}
	exp, err := collector.New(collector.Options{})
	if err != nil {
		f.Fatal(err)
	}
	exp.SetClusters(clusters)
	reg := prometheus.NewRegistry()
	reg.MustRegister(exp)
	for i := 0; i < 3; i++ {
		if _, err := reg.Gather(); err != nil {
			f.Fatal(err)
		}
		clock.Advance(time.Minute)
	}
	var saved bytes.Buffer
	if err := exp.WriteState(&saved); err != nil {
		f.Fatal(err)
	}
	client.CloseIdleConnections()
	sim.Close() // the fuzzing itself makes no call
	f.Add(saved.Bytes())
	f.Add(saved.Bytes()[:saved.Len()/2])
	f.Add([]byte(`{"version":1,"nodes":{"/core-1:9999":{"contacted":true,"cursor":-5,"seen":{"floor":9e18}}}}`))
	f.Add([]byte(`{"version":1,"nodes":{"/core-1:9999":null}}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"version":1,"nodes":{"/core-1:9999":{"contacted":true,"durations":{"TABLE_LOADED":null},"pending":{"x":{"n":-3}},"events":{"TABLE_LOADED":1}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fresh, err := collector.New(collector.Options{})
		if err != nil {
			t.Fatal(err)
		}
		fresh.SetClusters(clusters)
		_, _ = fresh.ReadState(bytes.NewReader(data))
		var out bytes.Buffer
		if err := fresh.WriteState(&out); err != nil {
			t.Errorf("WriteState after ReadState: %v", err)
		}
		if _, err := fresh.ReadState(bytes.NewReader(out.Bytes())); err != nil {
			t.Errorf("a state written back does not read: %v", err)
		}
	})
}
