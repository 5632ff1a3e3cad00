package harness

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	promconfig "github.com/prometheus/common/config"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
	"github.com/indexima-exporter/indexima_exporter/collector"
	"github.com/indexima-exporter/indexima_exporter/poller"
)

// knobExporter is an exporter polling the row's cluster: scrape gathers
// once (the caller moves the clock).
type knobExporter interface {
	scrape(ctx context.Context) (exposition, error)
	stop()
}

type binaryExporter struct{ e *exporterRun }

func (b binaryExporter) scrape(ctx context.Context) (exposition, error) {
	if _, err := b.e.scrape(ctx, 0); err != nil {
		return nil, err
	}
	return b.e.last, nil
}

func (b binaryExporter) stop() { b.e.stop() }

// inProcessExporter is the collector on its own registry, with a client of
// the simulated console, as the binary builds them.
type inProcessExporter struct {
	reg *prometheus.Registry
	// front is a server in front of the simulator, tracing calls or
	// answering without gzip; nil: the client calls the simulator itself.
	front *httptest.Server
}

func newInProcessExporter(c *cluster, logger log.Logger, trace *tracer, plain bool) (*inProcessExporter, error) {
	e := &inProcessExporter{}
	url := c.sim.URL()
	switch {
	case trace != nil:
		e.front = httptest.NewServer(trace.wrap(c.sim.Handler()))
	case plain:
		h := c.sim.Handler()
		e.front = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Header.Del("Accept-Encoding")
			h.ServeHTTP(w, r)
		}))
	}
	if e.front != nil {
		url = e.front.URL
	}
	client, err := apiclient.New(apiclient.Config{URL: url, Username: harnessUser,
		Password: promconfig.Secret(harnessPassword), Timeout: 30 * time.Second, Logger: logger})
	if err != nil {
		return nil, err
	}
	polls := poller.New(poller.Options{Logger: log.With(logger, "component", "poller")})
	exp, err := collector.New(polls, collector.Options{Logger: log.With(logger, "component", "collector")})
	if err != nil {
		return nil, err
	}
	var nodes []poller.Node
	for _, n := range c.nodes {
		nodes = append(nodes, poller.Node{Target: apiclient.Node{Host: n.Host, Port: n.Port}})
	}
	polls.SetClusters([]poller.Cluster{{Client: client, Nodes: nodes}})
	e.reg = prometheus.NewRegistry()
	if err := e.reg.Register(exp); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *inProcessExporter) scrape(context.Context) (exposition, error) {
	fams, err := e.reg.Gather()
	if err != nil {
		return nil, err
	}
	out := exposition{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out, nil
}

func (e *inProcessExporter) stop() {
	if e.front != nil {
		e.front.Close()
	}
}

// tracer writes a line per console call (KnobOptions.Trace).
type tracer struct {
	w     io.Writer
	mu    sync.Mutex
	phase string // where the row is: "warm-up 3", "steady 12", ...
}

func (t *tracer) at(phase string) {
	t.mu.Lock()
	t.phase = phase
	t.mu.Unlock()
}

func (t *tracer) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del("Accept-Encoding") // a plain body, to read it
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		what := fmt.Sprintf("%d bytes", len(body))
		switch {
		case bytes.HasPrefix(body, []byte(`{"reqs":`)):
			reqs, runnings, _ := bytes.Cut(body, []byte(`"runnings":`))
			_, last, _ := bytes.Cut(body, []byte(`"last":`))
			what = fmt.Sprintf("reqs=%d runnings=%d last=%s", bytes.Count(reqs, []byte(`{"type":`)),
				bytes.Count(runnings, []byte(`{"type":`)), bytes.TrimRight(last, "}\n "))
		case len(body) < 40:
			what = string(body)
		}
		t.mu.Lock()
		fmt.Fprintf(t.w, "%s %s:%s %s %d %s\n", t.phase, r.Header.Get("Monitor-Target-Host"), r.Header.Get("Monitor-Target-Port"),
			r.URL.Path, rec.Code, what)
		t.mu.Unlock()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}
