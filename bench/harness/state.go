package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"text/tabwriter"
	"time"
)

// StateOptions is the state-store comparison: the same load on the same
// simulated cluster (same seed), once without --events.state-file and once
// with it, through /probe (every node probed on its own, Parallel at once,
// the sharded setup of docs/scaling.md) and through /metrics.
type StateOptions struct {
	Nodes    int           // default 200
	Rounds   int           // measured /probe rounds (each probes every node once); default 30
	Scrapes  int           // measured /metrics scrapes; default 40
	Parallel int           // probes at once; default 16
	Interval time.Duration // simulated time between rounds or scrapes; default 30s
	Rate     float64       // events per node per simulated second; default 0.05
	Repeat   int           // runs of each (without, with) pair; default 1
	Seed     int64

	ExporterBin string // required
	Log         io.Writer
	Timeout     time.Duration // default 20m
}

func (o StateOptions) withDefaults() StateOptions {
	if o.Nodes <= 0 {
		o.Nodes = 200
	}
	if o.Rounds <= 0 {
		o.Rounds = 30
	}
	if o.Scrapes <= 0 {
		o.Scrapes = 40
	}
	if o.Parallel <= 0 {
		o.Parallel = 16
	}
	if o.Interval <= 0 {
		o.Interval = 30 * time.Second
	}
	if o.Rate == 0 {
		o.Rate = 0.05
	}
	if o.Repeat <= 0 {
		o.Repeat = 1
	}
	if o.Seed == 0 {
		o.Seed = 42
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Timeout <= 0 {
		o.Timeout = 20 * time.Minute
	}
	return o
}

// StateRow is one endpoint measured with or without the store.
type StateRow struct {
	Endpoint    string // "/probe" or "/metrics"
	Store       bool
	Run         int // 1..Repeat
	N           int
	NodeScrapes int // probes, or scrapes x N
	CPU         time.Duration
	Wall        time.Duration
	Writes      float64 // node states written (indexima_exporter_state_writes_total)
	Bytes       float64 // their bytes
	Syncs       float64 // fdatasyncs of the store (indexima_exporter_state_syncs_total)
	StoreBytes  int64   // size of the store's files at the end (sparse: apparent size)
}

// CPUPerNodeScrape is the exporter's CPU per node-scrape.
func (r StateRow) CPUPerNodeScrape() time.Duration {
	return r.CPU / time.Duration(max(r.NodeScrapes, 1))
}

// RunState measures each endpoint without and with the store, Repeat
// times. The two exporters of a pair run side by side, each on a fresh
// cluster of the same seed, and take turns: round i of the one without
// the store, then round i of the one with it, each exporter's CPU read
// around its own rounds only. A machine whose speed drifts during the run
// (other work, a noisy neighbour) then weighs on both alike, which two
// runs one after the other did not ensure: their ratio moved by 0.2
// between runs on a quiet machine.
func RunState(o StateOptions) ([]StateRow, error) {
	o = o.withDefaults()
	if o.ExporterBin == "" {
		return nil, errors.New("harness: no exporter binary given")
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
	defer cancel()
	var rows []StateRow
	for run := 1; run <= o.Repeat; run++ {
		for _, ep := range []string{"/probe", "/metrics"} {
			fmt.Fprintf(o.Log, "state store: %s, run %d\n", ep, run)
			pair, err := measureStatePair(ctx, o, ep)
			if err != nil {
				return rows, fmt.Errorf("state store: %s: %w", ep, err)
			}
			for i := range pair {
				pair[i].Run = run
			}
			rows = append(rows, pair[:]...)
		}
	}
	return rows, nil
}

// stateSide is one exporter of a pair: its cluster, process and counts.
type stateSide struct {
	row      StateRow
	c        *cluster
	e        *exporterRun
	dir      string
	client   *http.Client
	tr       *http.Transport
	endpoint string
	parallel int
	interval time.Duration

	firstBody  []byte
	w0, b0, s0 float64
}

func startStateSide(o StateOptions, endpoint string, withStore bool) (*stateSide, error) {
	sd := &stateSide{row: StateRow{Endpoint: endpoint, Store: withStore, N: o.Nodes}, endpoint: endpoint,
		parallel: o.Parallel, interval: o.Interval}
	var err error
	if sd.c, err = startCluster(o.Nodes, o.Rate, o.Seed, console{}); err != nil {
		return nil, err
	}
	if sd.dir, err = os.MkdirTemp("", "loadharness-state-"); err != nil {
		sd.close()
		return nil, err
	}
	var args []string
	if withStore {
		args = append(args, "--events.state-file="+filepath.Join(sd.dir, "state.json"))
	}
	if endpoint == "/probe" {
		// /metrics then serves the exporter's own metrics only: reading the
		// store's counters polls nothing.
		args = append(args, "--scrape.probe-only")
	}
	if sd.e, err = startExporter(Options{ExporterBin: o.ExporterBin, Args: args}, sd.c); err != nil {
		sd.close()
		return nil, err
	}
	sd.tr = &http.Transport{MaxIdleConnsPerHost: o.Parallel}
	sd.client = &http.Client{Transport: sd.tr, Timeout: 2 * time.Minute}
	return sd, nil
}

func (sd *stateSide) close() {
	if sd.tr != nil {
		sd.tr.CloseIdleConnections()
	}
	if sd.e != nil {
		sd.e.stop()
	}
	if sd.dir != "" {
		os.RemoveAll(sd.dir)
	}
	sd.c.close()
}

// round advances the side's cluster by an interval and scrapes it once
// (/metrics) or probes each of its nodes once (/probe). A /metrics scrape
// shows the store's counters as they were before its own save; with
// --scrape.probe-only it polls nothing.
func (sd *stateSide) round(ctx context.Context, i int) error {
	sd.c.clock.Advance(sd.interval)
	if sd.endpoint == "/metrics" {
		body, _, err := sd.e.p.get(ctx, sd.client, "/metrics")
		if i == 0 {
			sd.firstBody = body
		}
		return err
	}
	return probeAll(ctx, sd.e.p, sd.client, sd.c, sd.parallel)
}

// measuredRound is round with the exporter's CPU and wall time added to the
// row.
func (sd *stateSide) measuredRound(ctx context.Context, i int) error {
	cpu0, err := cpuTime(sd.e.p.pid())
	if err != nil {
		return err
	}
	start := time.Now()
	if err := sd.round(ctx, i); err != nil {
		return err
	}
	sd.row.Wall += time.Since(start)
	cpu1, err := cpuTime(sd.e.p.pid())
	if err != nil {
		return err
	}
	sd.row.CPU += cpu1 - cpu0
	return nil
}

// counters reads the store's counters from body (nil: a /metrics scrape
// now).
func (sd *stateSide) counters(ctx context.Context, body []byte) (w, b, s float64, err error) {
	if body == nil {
		if body, _, err = sd.e.p.get(ctx, sd.client, "/metrics"); err != nil {
			return 0, 0, 0, err
		}
	}
	x, err := parseExposition(body)
	if err != nil {
		return 0, 0, 0, err
	}
	return x.sum("indexima_exporter_state_writes_total"), x.sum("indexima_exporter_state_written_bytes_total"), x.sum("indexima_exporter_state_syncs_total"), nil
}

// measureStatePair measures the endpoint without the store (the pair's
// first row) and with it (its second), their rounds taking turns.
func measureStatePair(ctx context.Context, o StateOptions, endpoint string) ([2]StateRow, error) {
	var rows [2]StateRow
	var sides [2]*stateSide
	for i, withStore := range []bool{false, true} {
		sd, err := startStateSide(o, endpoint, withStore)
		if err != nil {
			return rows, fmt.Errorf("store %v: %w", withStore, err)
		}
		//nolint:revive // deferred in a loop of two: both sides run until the pair ends
		defer sd.close()
		sides[i] = sd
	}
	// Warm-up: first contact, then one incremental poll.
	for range 2 {
		for _, sd := range sides {
			if err := sd.round(ctx, -1); err != nil {
				return rows, fmt.Errorf("store %v: warm-up: %w", sd.row.Store, err)
			}
		}
	}
	count := o.Rounds
	if endpoint == "/metrics" {
		count = o.Scrapes
	}
	for _, sd := range sides {
		if endpoint == "/probe" {
			var err error
			if sd.w0, sd.b0, sd.s0, err = sd.counters(ctx, nil); err != nil {
				return rows, err
			}
		}
	}
	for i := range count {
		for _, sd := range sides {
			if err := sd.measuredRound(ctx, i); err != nil {
				return rows, fmt.Errorf("store %v: round %d of %d: %w", sd.row.Store, i+1, count, err)
			}
		}
	}
	for k, sd := range sides {
		sd.row.NodeScrapes = count * o.Nodes
		if endpoint == "/metrics" {
			var err error
			if sd.w0, sd.b0, sd.s0, err = sd.counters(ctx, sd.firstBody); err != nil {
				return rows, err
			}
		}
		// For /metrics, one more scrape (not measured): it shows the writes
		// up to the last measured one.
		w1, b1, s1, err := sd.counters(ctx, nil)
		if err != nil {
			return rows, err
		}
		sd.row.Writes, sd.row.Bytes, sd.row.Syncs = w1-sd.w0, b1-sd.b0, s1-sd.s0
		if sd.row.Store {
			sd.row.StoreBytes = dirSize(sd.dir)
		}
		rows[k] = sd.row
	}
	return rows, nil
}

// probeAll probes every node once, parallel at once, as Prometheus scrapes
// its targets side by side.
func probeAll(ctx context.Context, p *process, client *http.Client, c *cluster, parallel int) error {
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for _, n := range c.nodes {
		sem <- struct{}{}
		wg.Add(1)
		go func(target string) {
			defer wg.Done()
			defer func() { <-sem }()
			if _, _, err := p.get(ctx, client, "/probe?"+url.Values{"target": {target}}.Encode()); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		}(n.Key())
	}
	wg.Wait()
	return first
}

func dirSize(dir string) int64 {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var total int64
	for _, e := range entries {
		if info, err := e.Info(); err == nil {
			total += info.Size()
		}
	}
	return total
}

// WriteStateTable prints the comparison, each row with the store against
// the row without it of the same run and endpoint.
func WriteStateTable(w io.Writer, rows []StateRow) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "indexima_exporter without and with the state store (--events.state-file), N=%d\n", rows[0].N)
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintln(tw, "endpoint\tstate store\trun\tnode-scrapes\tCPU ms\tCPU µs/node-scrape\twall ms\tnode writes/node-scrape\tsyncs/node-scrape\tKiB written/node-scrape\tstore KiB\tCPU with/without\twall with/without\t")
	without := map[string]StateRow{}
	for _, r := range rows {
		key := fmt.Sprintf("%s/%d", r.Endpoint, r.Run)
		ratio, wall, store := "", "", "no"
		if !r.Store {
			without[key] = r
		} else if b, ok := without[key]; ok && b.CPUPerNodeScrape() > 0 {
			store = "yes"
			ratio = fmt.Sprintf("%.2fx", float64(r.CPUPerNodeScrape())/float64(b.CPUPerNodeScrape()))
			wall = fmt.Sprintf("%.2fx", float64(r.Wall)/float64(b.Wall))
		}
		if r.Store {
			store = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%.2f\t%.2f\t%.1f\t%.0f\t%s\t%s\t\n", r.Endpoint, store, r.Run, r.NodeScrapes,
			ms(r.CPU), us(r.CPUPerNodeScrape()), ms(r.Wall), r.Writes/float64(r.NodeScrapes), r.Syncs/float64(r.NodeScrapes), r.Bytes/1024/float64(r.NodeScrapes),
			float64(r.StoreBytes)/1024, ratio, wall)
	}
	tw.Flush()
}
