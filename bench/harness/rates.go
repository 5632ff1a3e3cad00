package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// RateOptions of the rates table: for each console profile, with and without
// a count that includes running events, and each event rate, a small cluster
// scraped every Interval of simulated time: what a node-scrape costs in
// console calls once first contact is past (and, on a console that counts
// running events, once that is told), and whether the self-check (reported
// minus counted) stays at 0.
type RateOptions struct {
	Profiles []string  // simulator profiles; default every one
	Rates    []float64 // events per node per simulated second; default 0.2, 2, 20
	Nodes    int       // default 3
	WarmUp   int       // scrapes before the measure (first contact, detection); default 5
	Scrapes  int       // measured scrapes; default 30
	Interval time.Duration
	// ExporterBin is required; Seed, Log and Timeout as in Options.
	ExporterBin string
	Seed        int64
	Log         io.Writer
	Timeout     time.Duration
}

// RateRow is one line of the rates table.
type RateRow struct {
	Profile       string
	CountRunning  bool
	Rate          float64
	CallsPerScrp  float64 // console calls per node per scrape, mean over nodes
	MaxCalls      float64 // the busiest node's
	Counted       float64 // events counted over the run, all nodes
	Missed        []float64
	ByEndpoint    map[string]int
	EventsPerNode float64 // events the console logged per node during the measure
}

// RunRates runs the rates table.
func RunRates(o RateOptions) ([]RateRow, error) {
	if o.ExporterBin == "" {
		return nil, errors.New("harness: no exporter binary given")
	}
	if len(o.Rates) == 0 {
		o.Rates = []float64{0.2, 2, 20}
	}
	if o.Nodes <= 0 {
		o.Nodes = 3
	}
	if o.WarmUp <= 0 {
		o.WarmUp = 5
	}
	if o.Scrapes <= 0 {
		o.Scrapes = 30
	}
	if o.Interval <= 0 {
		o.Interval = time.Second
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
	ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
	defer cancel()
	var rows []RateRow
	for _, profile := range o.Profiles {
		for _, countRunning := range []bool{false, true} {
			for _, rate := range o.Rates {
				fmt.Fprintf(o.Log, "rates: profile %s, count running %v, %g events/s per node\n", profile, countRunning, rate)
				row, err := runRate(ctx, o, console{profile: profile, countRunning: countRunning}, rate)
				if err != nil {
					return rows, fmt.Errorf("harness: profile %s, rate %g: %w", profile, rate, err)
				}
				rows = append(rows, row)
			}
		}
	}
	return rows, nil
}

func runRate(ctx context.Context, o RateOptions, con console, rate float64) (RateRow, error) {
	row := RateRow{Profile: con.profile, CountRunning: con.countRunning, Rate: rate}
	c, err := startCluster(o.Nodes, rate, o.Seed, con)
	if err != nil {
		return row, err
	}
	defer c.close()
	e, err := startExporter(Options{ExporterBin: o.ExporterBin}, c)
	if err != nil {
		return row, err
	}
	defer e.stop()
	if _, err := e.run(ctx, o.WarmUp, o.Interval); err != nil {
		return row, fmt.Errorf("warm-up: %w", err)
	}
	// A console that counts running events is told by searches that find
	// nothing, when running events are first listed: at a low rate that
	// takes a while, and is not the steady state.
	for i := 0; con.countRunning && i < 300 && e.last.sumWhere("indexima_event_count_semantics", "semantics", "unknown") > 0; i++ {
		if _, err := e.scrape(ctx, o.Interval); err != nil {
			return row, fmt.Errorf("warm-up: %w", err)
		}
	}
	before := c.logged()
	ph, err := e.run(ctx, o.Scrapes, o.Interval)
	if err != nil {
		return row, err
	}
	row.EventsPerNode = float64(c.logged()-before) / float64(o.Nodes)
	total, busiest := 0, 0
	for _, r := range ph.nodeReqs {
		total += r
		busiest = max(busiest, r)
	}
	row.CallsPerScrp = float64(total) / float64(o.Nodes*ph.scrapes)
	row.MaxCalls = float64(busiest) / float64(ph.scrapes)
	row.ByEndpoint = ph.requests
	row.Counted = e.last.sum("indexima_events_total")
	for _, n := range c.nodes {
		key := n.Key()
		row.Missed = append(row.Missed, e.last.sumWhere("indexima_events_reported_total", "node", key)-
			e.last.sumWhere("indexima_events_total", "node", key))
	}
	return row, nil
}

// logged counts the events in the nodes' logs.
func (c *cluster) logged() int {
	n := 0
	for _, nd := range c.nodes {
		n += len(c.sim.Truth(nd.Key()))
	}
	return n
}

// WriteRateTable prints the rates table (Markdown-compatible).
func WriteRateTable(w io.Writer, rows []RateRow) {
	if len(rows) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintln(w, "indexima_exporter by console profile and event rate (steady state after first contact)")
	fmt.Fprintln(tw, "profile\tcount includes running\tevents/s per node\tevents per node\tconsole calls/node/scrape (max)\treported - counted per node\tcalls by endpoint\t")
	for _, r := range rows {
		var missed []string
		for _, m := range r.Missed {
			missed = append(missed, fmt.Sprintf("%.0f", m))
		}
		var eps []string
		for ep, v := range r.ByEndpoint {
			if ep != "version" {
				eps = append(eps, fmt.Sprintf("%s=%d", ep, v))
			}
		}
		sort.Strings(eps)
		fmt.Fprintf(tw, "%s\t%v\t%g\t%.0f\t%.2f (%.2f)\t%s\t%s\t\n", r.Profile, r.CountRunning, r.Rate, r.EventsPerNode,
			r.CallsPerScrp, r.MaxCalls, strings.Join(missed, ", "), strings.Join(eps, " "))
	}
	tw.Flush()
}
