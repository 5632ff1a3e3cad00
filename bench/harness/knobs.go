package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/go-kit/log"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// Knob is one row of the table by knob: one reading of the simulated
// console (readings.go of the simulator) varied alone from the defaults, or
// an incident played on the default console.
type Knob struct {
	Name     string // what the row varies, e.g. "last=console-clock"
	Readings simulator.Readings
	// ClockOffset is every node's clock against the console's.
	ClockOffset time.Duration
	// Batch events are logged at one millisecond on every node right after
	// the warm-up (PRELOAD_FINISHED, a type the background never logs, so
	// that the scrapes reading them can be told); the scrapes until they are
	// all counted are the incident, not the steady state.
	Batch int
	// StopStart stops the cluster right after the warm-up and starts it
	// again one scrape later; those two scrapes are the incident.
	StopStart bool
	// ExporterClock starts the simulated clock at the exporter's (the wall
	// clock) instead of the harness's fixed day: a console whose answers
	// carry no Date header is read by the exporter's clock, which is then
	// the console's at first contact (afterwards the simulated clock runs
	// an interval ahead at every scrape, the exporter's a few milliseconds).
	ExporterClock bool
}

// Incident tells whether the row plays an incident after the warm-up.
func (k Knob) Incident() bool { return k.Batch > 0 || k.StopStart }

// Knobs lists the rows of the table by knob for a load of perScrape events
// per node and scrape interval: the default console, then each knob alone,
// then the incidents. The listing caps are set against perScrape: twice a
// scrape's events (above what a scrape adds, below what a listing that
// reaches back to the oldest running event holds, so most listings are
// cut), and half of them (a stress case: even a scrape's new events do not
// fit).
func Knobs(perScrape int) []Knob {
	perScrape = max(perScrape, 1)
	above, below := 2*perScrape, max(perScrape/2, 1)
	r := func(f func(*simulator.Readings)) simulator.Readings {
		var rd simulator.Readings
		f(&rd)
		return rd
	}
	ks := []Knob{{Name: "default"}}
	for _, v := range simulator.LastReadings[1:] {
		ks = append(ks, Knob{Readings: r(func(rd *simulator.Readings) { rd.Last = simulator.LastReading(v) })})
	}
	for _, v := range simulator.RunningsReadings[1:] {
		ks = append(ks, Knob{Readings: r(func(rd *simulator.Readings) { rd.Runnings = simulator.RunningsReading(v) })})
	}
	ks = append(ks, Knob{Readings: r(func(rd *simulator.Readings) { rd.ExclusiveSince = true })})
	for _, v := range simulator.BoundsReadings[1:] {
		ks = append(ks, Knob{Readings: r(func(rd *simulator.Readings) { rd.Bounds = simulator.BoundsReading(v) })})
	}
	ks = append(ks,
		Knob{Readings: r(func(rd *simulator.Readings) { rd.NewestFirst = true })},
		Knob{Readings: r(func(rd *simulator.Readings) { rd.ListingCap = above })},
		Knob{Readings: r(func(rd *simulator.Readings) { rd.ListingCap, rd.CapKeepsNewest = above, true })},
		Knob{Readings: r(func(rd *simulator.Readings) { rd.ListingCap = below })},
		Knob{Readings: r(func(rd *simulator.Readings) { rd.ListingCap, rd.CapKeepsNewest = below, true })},
		Knob{Readings: r(func(rd *simulator.Readings) { rd.MaxLimit = 100 })},
		Knob{Readings: r(func(rd *simulator.Readings) { rd.CountRunning = true })},
		Knob{Readings: r(func(rd *simulator.Readings) { rd.RetainFor = 10 * time.Minute })},
		Knob{Readings: r(func(rd *simulator.Readings) { rd.RetainLast = 2000 })},
		Knob{Name: "cluster stop and start", StopStart: true},
		Knob{Readings: r(func(rd *simulator.Readings) { rd.AbortOnStop = true }), StopStart: true},
		Knob{Readings: r(func(rd *simulator.Readings) { rd.NoDate = true }), ExporterClock: true},
		Knob{Name: "node clock 2m behind", ClockOffset: -2 * time.Minute},
		Knob{Name: "node clock 2m ahead", ClockOffset: 2 * time.Minute},
		Knob{Readings: r(func(rd *simulator.Readings) { rd.MaxLimit = 100 }), Batch: 500},
		// A run the capped listings cannot hold, longer than the engine's
		// first page (1000): read by pages whose :limit grows.
		Knob{Readings: r(func(rd *simulator.Readings) { rd.ListingCap = above }), Batch: 2500},
	)
	for i := range ks {
		k := &ks[i]
		if k.Name != "" {
			continue
		}
		k.Name = k.Readings.String()
		if k.StopStart {
			k.Name += ", cluster stop and start"
		}
		if k.Batch > 0 {
			k.Name = fmt.Sprintf("%d events at one ms, %s", k.Batch, k.Name)
		}
	}
	return ks
}

// KnobOptions of the table by knob. Each row runs on a fresh simulated
// cluster (Nodes nodes logging Rate events per simulated second, the
// simulator's mix) and a fresh exporter: WarmUp scrapes from first contact
// (and, on a console that counts running events, until that is told),
// then the row's incident if any (its scrapes are not the steady state),
// then Scrapes measured scrapes Interval of simulated time apart. Then the
// load stops: once every running event has completed, Rest scrapes
// RestStep apart, after which reported − counted (and counted − the
// simulator's truth) is read per node.
type KnobOptions struct {
	// Knobs are the rows; default Knobs(PerScrape()). Rows keeps those
	// named (a name, or a part of exactly one name); default all.
	Knobs    []Knob
	Rows     []string
	Nodes    int           // default 3
	Rate     float64       // default 2
	Interval time.Duration // default 30s
	WarmUp   int           // default 10
	Scrapes  int           // default 40
	Rest     int           // default 4
	RestStep time.Duration // default 5s
	// ExporterBin is the exporter binary run as a subprocess; "" runs the
	// collector in this process instead (apiclient and collector built as
	// the binary builds them, over loopback HTTP), with Logger as its log.
	ExporterBin string
	Logger      log.Logger
	// Plain, in-process only, has the console answer without gzip (the
	// calls are the same; gzip is slow under the race detector).
	Plain bool
	// Trace, in-process only, receives a line per console call: the phase
	// and scrape, the node, the path, and what the answer held.
	Trace   io.Writer
	Seed    int64
	Log     io.Writer // progress lines
	Timeout time.Duration
}

func (o KnobOptions) withDefaults() KnobOptions {
	if o.Nodes <= 0 {
		o.Nodes = 3
	}
	if o.Rate <= 0 {
		o.Rate = 2
	}
	if o.Interval <= 0 {
		o.Interval = 30 * time.Second
	}
	if o.WarmUp <= 0 {
		o.WarmUp = 10
	}
	if o.Scrapes <= 0 {
		o.Scrapes = 40
	}
	if o.Rest <= 0 {
		o.Rest = 4
	}
	if o.RestStep <= 0 {
		o.RestStep = 5 * time.Second
	}
	if o.Seed == 0 {
		o.Seed = 42
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Logger == nil {
		o.Logger = log.NewNopLogger()
	}
	if o.Timeout <= 0 {
		o.Timeout = 20 * time.Minute
	}
	return o
}

// PerScrape is the mean number of events a node logs between two scrapes.
func (o KnobOptions) PerScrape() int {
	d := o.withDefaults()
	return int(d.Rate*d.Interval.Seconds() + 0.5)
}

// KnobRow is what one row measured.
type KnobRow struct {
	Knob
	EventsPerScrape float64 // events a node logged per scrape interval in the measure
	// Steady state: console calls per node and scrape, the mean over nodes
	// and the busiest node's; node-scrapes that cost more than two calls,
	// and the most one cost.
	Calls, MaxCalls float64
	Over, Worst     int
	ByEndpoint      map[string]int // steady state, every node
	// Extra lists the node-scrapes above two calls (scrape number in the
	// measure, node, calls by endpoint), the first few.
	Extra []string
	// The incident (Knob.Incident): its scrapes and their calls per node and
	// scrape.
	IncidentScrapes int
	IncidentCalls   float64
	// WarmUp is the scrapes before the incident or the measure.
	WarmUp int
	// Missed is reported − counted of each node at rest, and Wrong
	// counted − truth: the events the node logged that completed after
	// first contact (by the node's clock) and by the last scrape, aborted
	// ones aside.
	Missed, Wrong []float64
	Counted       float64 // events counted over the run, every node
	// WrongTypes details a counted − truth that is not 0: node, event type,
	// difference.
	WrongTypes []string
}

// CallsOK tells whether the steady state met its target: two console calls
// per node and scrape, on every node.
func (r KnobRow) CallsOK() bool { return r.MaxCalls <= 2 && r.Calls <= 2 }

// ExactAtRest tells whether reported = counted = the truth on every node
// at rest.
func (r KnobRow) ExactAtRest() bool {
	for i, m := range r.Missed {
		if m != 0 || r.Wrong[i] != 0 {
			return false
		}
	}
	return len(r.Missed) > 0
}

// RunKnobs runs the rows of the table by knob, one after the other.
func RunKnobs(o KnobOptions) ([]KnobRow, error) {
	o = o.withDefaults()
	ks := o.Knobs
	if len(ks) == 0 {
		ks = Knobs(o.PerScrape())
	}
	ks, err := SelectKnobs(ks, o.Rows)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
	defer cancel()
	var rows []KnobRow
	for _, k := range ks {
		fmt.Fprintf(o.Log, "knobs: %s\n", k.Name)
		row, err := runKnob(ctx, o, k)
		if err != nil {
			return rows, fmt.Errorf("harness: knob %s: %w", k.Name, err)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// SelectKnobs keeps the rows named in names (a name, or a part of exactly
// one name); every row when names is empty.
func SelectKnobs(ks []Knob, names []string) ([]Knob, error) {
	if len(names) == 0 {
		return ks, nil
	}
	var out []Knob
	for _, name := range names {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(ks, func(k Knob) bool { return k.Name == name })
		if i < 0 {
			var matches []int
			for j, k := range ks {
				if strings.Contains(k.Name, name) {
					matches = append(matches, j)
				}
			}
			if len(matches) != 1 {
				var all []string
				for _, k := range ks {
					all = append(all, k.Name)
				}
				return nil, fmt.Errorf("harness: %q names %d knob rows, want one (rows: %s)", name, len(matches), strings.Join(all, "; "))
			}
			i = matches[0]
		}
		out = append(out, ks[i])
	}
	return out, nil
}

// knobRun is one row being run.
type knobRun struct {
	o    KnobOptions
	k    Knob
	c    *cluster
	e    knobExporter
	tr   *tracer // nil: no trace
	last exposition
	// first and now are the nodes' clock (Unix ms) at the first scrape and
	// at the latest.
	first, now int64
}

// scrape moves the simulated clock by step, gathers once, and returns the
// console calls of that scrape (by node, by endpoint). phase names the
// scrape in the trace.
func (r *knobRun) scrape(ctx context.Context, step time.Duration, phase string, i int) (simulator.Stats, error) {
	if r.tr != nil {
		r.tr.at(fmt.Sprintf("%s %d", phase, i))
	}
	if err := ctx.Err(); err != nil {
		return simulator.Stats{}, err
	}
	r.c.sim.ResetStats()
	r.c.clock.Advance(step)
	r.now = r.c.clock.Now().UnixMilli() + r.k.ClockOffset.Milliseconds()
	if r.first == 0 {
		r.first = r.now
	}
	m, err := r.e.scrape(ctx)
	if err != nil {
		return simulator.Stats{}, err
	}
	r.last = m
	for _, n := range r.c.nodes {
		if up := m.sumWhere("indexima_up", "node", n.Key()); up != 1 {
			return simulator.Stats{}, fmt.Errorf("node %s is down (indexima_up %v)", n.Key(), up)
		}
	}
	return r.c.sim.Stats(), nil
}

func runKnob(ctx context.Context, o KnobOptions, k Knob) (KnobRow, error) {
	row := KnobRow{Knob: k}
	start := clockStart
	if k.ExporterClock {
		start = time.Now().UTC().Truncate(time.Millisecond)
	}
	c, err := startClusterWith(o.Nodes, o.Rate, o.Seed, start, func(cfg *simulator.Config) error {
		cfg.Readings = k.Readings
		for i := range cfg.Nodes {
			cfg.Nodes[i].ClockOffset = k.ClockOffset
		}
		return k.Readings.Validate()
	})
	if err != nil {
		return row, err
	}
	defer c.close()
	var e knobExporter
	var tr *tracer
	if o.ExporterBin != "" {
		run, err := startExporter(Options{ExporterBin: o.ExporterBin}, c)
		if err != nil {
			return row, err
		}
		e = binaryExporter{run}
	} else {
		if o.Trace != nil {
			fmt.Fprintf(o.Trace, "knob %s\n", k.Name)
			tr = &tracer{w: o.Trace}
		}
		if e, err = newInProcessExporter(c, o.Logger, tr, o.Plain); err != nil {
			return row, err
		}
	}
	defer e.stop()
	r := &knobRun{o: o, k: k, c: c, e: e, tr: tr}

	// Warm-up: first contact, then polls until whatever the engine learns
	// from the first answers is learned; on a console that counts running
	// events, until that is told (searches that find nothing).
	unknown := func() bool { return r.last.sumWhere("indexima_event_count_semantics", "semantics", "unknown") > 0 }
	for i := 0; i < o.WarmUp || k.Readings.CountRunning && unknown() && i < 4*o.WarmUp; i++ {
		if _, err := r.scrape(ctx, o.Interval, "warm-up", i+1); err != nil {
			return row, fmt.Errorf("warm-up: %w", err)
		}
		row.WarmUp++
	}

	if k.Incident() {
		if err := r.incident(ctx, &row); err != nil {
			return row, fmt.Errorf("incident: %w", err)
		}
	}

	// The steady state.
	before := c.logged()
	row.ByEndpoint = map[string]int{}
	byNode := map[string]int{}
	for i := range o.Scrapes {
		st, err := r.scrape(ctx, o.Interval, "steady", i+1)
		if err != nil {
			return row, fmt.Errorf("steady scrape %d: %w", i+1, err)
		}
		for ep, v := range st.Requests {
			row.ByEndpoint[ep] += v
		}
		for _, n := range c.nodes {
			calls := st.NodeRequests[n.Key()]
			byNode[n.Key()] += calls
			row.Worst = max(row.Worst, calls)
			if calls > 2 {
				row.Over++
				if len(row.Extra) < 12 {
					row.Extra = append(row.Extra, fmt.Sprintf("scrape %d node %s: %d calls", i+1, n.Key(), calls))
				}
			}
		}
	}
	row.EventsPerScrape = float64(c.logged()-before) / float64(o.Nodes*o.Scrapes)
	total, busiest := 0, 0
	for _, v := range byNode {
		total += v
		busiest = max(busiest, v)
	}
	row.Calls = float64(total) / float64(o.Nodes*o.Scrapes)
	row.MaxCalls = float64(busiest) / float64(o.Scrapes)

	// At rest: no new events; the first scrape once every event running
	// has completed (so that no event completes between the last polls),
	// then the clock moving a little.
	c.sim.SetRate(0)
	drain := time.Duration(0)
	for _, n := range c.nodes {
		for _, ev := range c.sim.Truth(n.Key()) {
			if !ev.Aborted && ev.CompletedAt > r.now {
				drain = max(drain, time.Duration(ev.CompletedAt-r.now)*time.Millisecond)
			}
		}
	}
	for i := range o.Rest {
		step := o.RestStep
		if i == 0 {
			step += drain
		}
		if _, err := r.scrape(ctx, step, "rest", i+1); err != nil {
			return row, fmt.Errorf("rest scrape %d: %w", i+1, err)
		}
	}
	for _, n := range c.nodes {
		key := n.Key()
		counted := r.last.sumWhere("indexima_events_total", "node", key)
		truth, byType := 0, map[string]int{}
		for _, ev := range c.sim.Truth(key) {
			if ev.CompletedAt > r.first && ev.CompletedAt <= r.now {
				truth++
				byType[ev.Type]++
			}
		}
		if float64(truth) != counted {
			for _, typ := range simulator.EventTypes {
				got := r.last.sumWhere2("indexima_events_total", "node", key, "event", typ)
				if d := got - float64(byType[typ]); d != 0 {
					row.WrongTypes = append(row.WrongTypes, fmt.Sprintf("%s %s %+.0f", key, typ, d))
				}
			}
		}
		row.Counted += counted
		row.Missed = append(row.Missed, r.last.sumWhere("indexima_events_reported_total", "node", key)-counted)
		row.Wrong = append(row.Wrong, counted-float64(truth))
	}
	return row, nil
}

// maxIncidentScrapes bounds the scrapes an incident may take to be read.
const maxIncidentScrapes = 20

// incident plays the row's incident and scrapes through it: until the batch
// is counted on every node, or the stop and the start were each scraped.
func (r *knobRun) incident(ctx context.Context, row *KnobRow) error {
	k, c := row.Knob, r.c
	calls := 0
	scrape := func() error {
		st, err := r.scrape(ctx, r.o.Interval, "incident", row.IncidentScrapes+1)
		if err != nil {
			return err
		}
		for _, n := range c.nodes {
			calls += st.NodeRequests[n.Key()]
		}
		row.IncidentScrapes++
		return nil
	}
	switch {
	case k.Batch > 0:
		batchCounted := func() float64 {
			return r.last.sumWhere("indexima_events_total", "event", simulator.PreloadFinished)
		}
		want := batchCounted() + float64(k.Batch*len(c.nodes))
		for _, n := range c.nodes {
			evs := make([]simulator.Event, k.Batch)
			for i := range evs {
				evs[i] = simulator.Event{Type: simulator.PreloadFinished, Duration: 2,
					Comment: fmt.Sprint(len(c.sim.Indexes(n.Key())))}
			}
			c.sim.Append(n.Key(), evs...)
		}
		for batchCounted() < want {
			if row.IncidentScrapes == maxIncidentScrapes {
				return fmt.Errorf("the batch is not counted after %d scrapes: %.0f of %d", maxIncidentScrapes,
					batchCounted()-(want-float64(k.Batch*len(c.nodes))), k.Batch*len(c.nodes))
			}
			if err := scrape(); err != nil {
				return err
			}
		}
	case k.StopStart:
		c.sim.StopCluster()
		if err := scrape(); err != nil {
			return err
		}
		c.sim.StartCluster()
		if err := scrape(); err != nil {
			return err
		}
	default:
		return errors.New("no incident")
	}
	row.IncidentCalls = float64(calls) / float64(len(c.nodes)*row.IncidentScrapes)
	return nil
}

// WriteKnobTable prints the table by knob (Markdown-compatible).
func WriteKnobTable(w io.Writer, o KnobOptions, rows []KnobRow) {
	if len(rows) == 0 {
		return
	}
	o = o.withDefaults()
	fmt.Fprintf(w, "indexima_exporter by knob of the console (%d nodes, %g events/s per node, scrapes %s apart: %d of warm-up, %d measured, %d at rest %s apart)\n",
		o.Nodes, o.Rate, o.Interval, o.WarmUp, o.Scrapes, o.Rest, o.RestStep)
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintln(tw, "knob\tevents/node/scrape\tcalls/node/scrape (busiest)\tnode-scrapes > 2 (most)\tincident: scrapes, calls/node/scrape\treported - counted per node at rest\tcounted - truth\ttarget\tsteady calls by endpoint\t")
	for _, r := range rows {
		var missed, wrong []string
		for i, m := range r.Missed {
			missed = append(missed, fmt.Sprintf("%.0f", m))
			wrong = append(wrong, fmt.Sprintf("%.0f", r.Wrong[i]))
		}
		incident := "-"
		if r.Incident() {
			incident = fmt.Sprintf("%d, %.2f", r.IncidentScrapes, r.IncidentCalls)
		}
		target := "met"
		if !r.ExactAtRest() || !r.CallsOK() {
			target = "MISSED"
		}
		var eps []string
		for ep, v := range r.ByEndpoint {
			eps = append(eps, fmt.Sprintf("%s=%d", ep, v))
		}
		sort.Strings(eps)
		fmt.Fprintf(tw, "%s\t%.1f\t%.2f (%.2f)\t%d (%d)\t%s\t%s\t%s\t%s\t%s\t\n", r.Name, r.EventsPerScrape, r.Calls, r.MaxCalls,
			r.Over, r.Worst, incident, strings.Join(missed, ", "), strings.Join(wrong, ", "), target, strings.Join(eps, " "))
	}
	tw.Flush()
}
