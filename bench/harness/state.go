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
	Rounds   int           // measured /probe rounds (each probes every node once); default 10
	Scrapes  int           // measured /metrics scrapes; default 20
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
		o.Rounds = 10
	}
	if o.Scrapes <= 0 {
		o.Scrapes = 20
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

// RunState measures each endpoint without and with the store, Repeat times,
// alternating, each run on a fresh cluster of the same seed.
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
			for _, withStore := range []bool{false, true} {
				fmt.Fprintf(o.Log, "state store: %s, store %v, run %d\n", ep, withStore, run)
				row, err := measureState(ctx, o, ep, withStore)
				if err != nil {
					return rows, fmt.Errorf("state store: %s (store %v): %w", ep, withStore, err)
				}
				row.Run = run
				rows = append(rows, row)
			}
		}
	}
	return rows, nil
}

func measureState(ctx context.Context, o StateOptions, endpoint string, withStore bool) (StateRow, error) {
	row := StateRow{Endpoint: endpoint, Store: withStore, N: o.Nodes}
	c, err := startCluster(o.Nodes, o.Rate, o.Seed, console{})
	if err != nil {
		return row, err
	}
	defer c.close()
	dir, err := os.MkdirTemp("", "loadharness-state-")
	if err != nil {
		return row, err
	}
	defer os.RemoveAll(dir)
	var args []string
	if withStore {
		args = append(args, "--events.state-file="+filepath.Join(dir, "state.json"))
	}
	if endpoint == "/probe" {
		// /metrics then serves the exporter's own metrics only: reading the
		// store's counters polls nothing.
		args = append(args, "--scrape.probe-only")
	}
	e, err := startExporter(Options{ExporterBin: o.ExporterBin, Args: args}, c)
	if err != nil {
		return row, err
	}
	defer e.stop()
	tr := &http.Transport{MaxIdleConnsPerHost: o.Parallel}
	client := &http.Client{Transport: tr, Timeout: 2 * time.Minute}
	defer tr.CloseIdleConnections()

	// A /metrics scrape shows the store's counters as they were before its
	// own save; with --scrape.probe-only it polls nothing.
	var firstBody []byte
	round := func(i int) error {
		c.clock.Advance(o.Interval)
		if endpoint == "/metrics" {
			body, _, err := e.p.get(ctx, client, "/metrics")
			if i == 0 {
				firstBody = body
			}
			return err
		}
		return probeAll(ctx, e.p, client, c, o.Parallel)
	}
	counters := func(body []byte) (float64, float64, float64, error) {
		if body == nil {
			var err error
			if body, _, err = e.p.get(ctx, client, "/metrics"); err != nil {
				return 0, 0, 0, err
			}
		}
		x, err := parseExposition(body)
		if err != nil {
			return 0, 0, 0, err
		}
		return x.sum("indexima_exporter_state_writes_total"), x.sum("indexima_exporter_state_written_bytes_total"), x.sum("indexima_exporter_state_syncs_total"), nil
	}
	// Warm-up: first contact, then one incremental poll.
	for range 2 {
		if err := round(-1); err != nil {
			return row, fmt.Errorf("warm-up: %w", err)
		}
	}
	count := o.Rounds
	if endpoint == "/metrics" {
		count = o.Scrapes
	}
	var w0, b0, s0 float64
	if endpoint == "/probe" {
		if w0, b0, s0, err = counters(nil); err != nil {
			return row, err
		}
	}
	cpu0, err := cpuTime(e.p.pid())
	if err != nil {
		return row, err
	}
	start := time.Now()
	for i := range count {
		if err := round(i); err != nil {
			return row, fmt.Errorf("round %d of %d: %w", i+1, count, err)
		}
	}
	row.Wall = time.Since(start)
	cpu1, err := cpuTime(e.p.pid())
	if err != nil {
		return row, err
	}
	row.CPU = cpu1 - cpu0
	row.NodeScrapes = count * o.Nodes
	if endpoint == "/metrics" {
		if w0, b0, s0, err = counters(firstBody); err != nil {
			return row, err
		}
	}
	// For /metrics, one more scrape (not measured): it shows the writes
	// up to the last measured one.
	w1, b1, s1, err := counters(nil)
	if err != nil {
		return row, err
	}
	row.Writes, row.Bytes, row.Syncs = w1-w0, b1-b0, s1-s0
	if withStore {
		row.StoreBytes = dirSize(dir)
	}
	return row, nil
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
