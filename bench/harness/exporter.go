package harness

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strconv"
	"time"
)

// exporterRun is the exporter subprocess polling one simulated cluster.
type exporterRun struct {
	c      *cluster
	p      *process
	client *http.Client
	logins int // logins seen by the console so far (stats are reset per phase)
	last   exposition
	body   bytes.Buffer // the answer of the latest scrape, kept for the next (getInto)
}

func startExporter(o Options, c *cluster) (*exporterRun, error) {
	dir, err := os.MkdirTemp("", "loadharness-")
	if err != nil {
		return nil, err
	}
	cfg, err := c.writeExporterConfig(dir)
	if err != nil {
		return nil, err
	}
	// Info, not warn: the harness reads the port the exporter bound from its
	// "Listening on" line (o.Args must not lower the level). Info adds only
	// a few lines at start and one first contact per node, nothing per scrape.
	args := append([]string{"--config.file=" + cfg, "--log.level=info"}, o.Args...)
	if o.Concurrency > 0 {
		args = append(args, "--scrape.concurrency="+strconv.Itoa(o.Concurrency))
	}
	p, err := startProcess("indexima_exporter", o.ExporterBin, args, "--web.listen-address", "/-/ready", 30*time.Second)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// The config directory is only read at start and reload.
	defer os.RemoveAll(dir)
	// One connection is enough: Prometheus scrapes a target one scrape at a time.
	tr := &http.Transport{MaxIdleConnsPerHost: 1}
	return &exporterRun{c: c, p: p, client: &http.Client{Transport: tr, Timeout: 2 * time.Minute}}, nil
}

func (e *exporterRun) stop() { e.p.stop() }

// scrape advances the simulated clock by step and scrapes /metrics once.
func (e *exporterRun) scrape(ctx context.Context, step time.Duration) (time.Duration, error) {
	e.c.clock.Advance(step)
	d, err := e.p.getInto(ctx, e.client, "/metrics", &e.body)
	if err != nil {
		return d, err
	}
	if e.last, err = parseExposition(e.body.Bytes()); err != nil {
		return d, err
	}
	return d, nil
}

// phase is what a series of scrapes cost.
type phase struct {
	scrapes   int
	durations []time.Duration
	cpu       time.Duration
	requests  map[string]int // by endpoint
	nodeReqs  map[string]int // by node
	logins    int
	conns     int // connections the console accepted
}

// run scrapes count times, step of simulated time apart, and measures CPU
// and console requests over exactly those scrapes.
func (e *exporterRun) run(ctx context.Context, count int, step time.Duration) (phase, error) {
	e.c.sim.ResetStats()
	cpu0, err := cpuTime(e.p.pid())
	if err != nil {
		return phase{}, err
	}
	ph := phase{scrapes: count}
	for i := range count {
		if err := ctx.Err(); err != nil {
			return ph, fmt.Errorf("scrape %d of %d: %w", i+1, count, err)
		}
		d, err := e.scrape(ctx, step)
		if err != nil {
			return ph, err
		}
		ph.durations = append(ph.durations, d)
	}
	cpu1, err := cpuTime(e.p.pid())
	if err != nil {
		return ph, err
	}
	st := e.c.sim.Stats()
	ph.cpu = cpu1 - cpu0
	ph.requests, ph.nodeReqs, ph.logins, ph.conns = st.Requests, st.NodeRequests, st.Logins, st.Connections
	e.logins += st.Logins
	return ph, nil
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func maxOf(ds []time.Duration) time.Duration {
	m := time.Duration(0)
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

// measureExporter fills the exporter columns of row for c.
func measureExporter(ctx context.Context, o Options, c *cluster, row *Row, day bool) error {
	e, err := startExporter(o, c)
	if err != nil {
		return err
	}
	defer e.stop()
	n := len(c.nodes)

	// Warm-up: first contact (baseline, version), then one incremental poll.
	if _, err := e.run(ctx, 2, o.Interval); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}

	steady, err := e.run(ctx, o.scrapesFor(n), o.Interval)
	if err != nil {
		return fmt.Errorf("steady state: %w", err)
	}
	row.Scrapes = steady.scrapes
	total, busiest := 0, 0
	for _, r := range steady.nodeReqs {
		total += r
		busiest = max(busiest, r)
	}
	row.RequestsPerNodeScrape = float64(total) / float64(n*steady.scrapes)
	row.MaxRequestsPerNodeScrape = float64(busiest) / float64(steady.scrapes)
	row.RequestsByEndpoint = steady.requests
	row.CPUPerNodeScrape = steady.cpu / time.Duration(n*steady.scrapes)
	row.SeriesPerNode = e.last.series("node", c.nodes[0].Key())
	if m, err := readMemory(e.p.pid()); err == nil {
		row.RSS = m.RSS
	} else {
		return err
	}

	if o.LatencyScrapes > 0 {
		if err := e.latencyPhase(ctx, o, row); err != nil {
			return fmt.Errorf("latency phase: %w", err)
		}
	}

	if day {
		d, err := e.dayPhase(ctx, o, n)
		if err != nil {
			return fmt.Errorf("day phase: %w", err)
		}
		row.Day = d
	}
	row.Counted = e.last.sum("indexima_events_total")
	row.Reported = e.last.sum("indexima_events_reported_total")
	row.Logins = e.logins
	return nil
}

// latencyPhase scrapes with every node answering o.Latency late, one scrape
// at a time, and compares each scrape with the slowest node's own round
// trips in it: its number of calls (2 in the steady state, more when it
// looked up an event or paged) times the latency.
func (e *exporterRun) latencyPhase(ctx context.Context, o Options, row *Row) error {
	e.c.setLatency(o.Latency)
	defer e.c.setLatency(0)
	var durations []time.Duration
	var ratios []float64
	for range o.LatencyScrapes {
		ph, err := e.run(ctx, 1, o.Interval)
		if err != nil {
			return err
		}
		calls := 0
		for _, r := range ph.nodeReqs {
			calls = max(calls, r)
		}
		if calls == 0 {
			return fmt.Errorf("a scrape made no call to any node")
		}
		durations = append(durations, ph.durations[0])
		ratios = append(ratios, float64(ph.durations[0])/float64(time.Duration(calls)*o.Latency))
		row.SlowestNodeCalls = max(row.SlowestNodeCalls, calls)
	}
	sort.Float64s(ratios)
	row.Latency = o.Latency
	row.ScrapeMedian, row.ScrapeMax = median(durations), maxOf(durations)
	row.LatencyRatio, row.LatencyRatioMax = ratios[len(ratios)/2], ratios[len(ratios)-1]
	return nil
}

// dayPhase runs a simulated day in o.DaySteps scrapes and reads the
// resident memory after each: RSS after one scrape depends on where the
// garbage collector happens to be, so the row reports the median over the
// second half of the day (the state has grown by then), the last value and
// the process's peak.
func (e *exporterRun) dayPhase(ctx context.Context, o Options, n int) (*DayRow, error) {
	step := 24 * time.Hour / time.Duration(o.DaySteps)
	e.c.sim.ResetStats()
	cpu0, err := cpuTime(e.p.pid())
	if err != nil {
		return nil, err
	}
	var rss []int64
	var m memory
	for i := range o.DaySteps {
		if _, err := e.scrape(ctx, step); err != nil {
			return nil, fmt.Errorf("scrape %d of the day: %w", i+1, err)
		}
		if m, err = readMemory(e.p.pid()); err != nil {
			return nil, err
		}
		if i >= o.DaySteps/2 {
			rss = append(rss, m.RSS)
		}
	}
	cpu1, err := cpuTime(e.p.pid())
	if err != nil {
		return nil, err
	}
	e.logins += e.c.sim.Stats().Logins
	sort.Slice(rss, func(i, j int) bool { return rss[i] < rss[j] })
	return &DayRow{Scrapes: o.DaySteps, Simulated: 24 * time.Hour, RSS: m.RSS, MedianRSS: rss[len(rss)/2], PeakRSS: m.Peak,
		CPUPerNodeScrape: (cpu1 - cpu0) / time.Duration(n*o.DaySteps),
		EventsCounted:    e.last.sum("indexima_events_total"),
		EventsReported:   e.last.sum("indexima_events_reported_total")}, nil
}
