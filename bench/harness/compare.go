package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"
)

// CompareRow is the steady-state CPU of two exporter binaries on N nodes,
// measured side by side.
type CompareRow struct {
	N            int
	Scrapes      int
	CPUA, CPUB   time.Duration // per node-scrape
	RSSA, RSSB   int64
	WallA, WallB time.Duration // median scrape
	// GCA, GCB: the exporter's garbage collections per scrape, from its
	// go_gc_duration_seconds; AllocA, AllocB: the bytes it allocated per
	// scrape, from go_memstats_alloc_bytes_total. A scrape that allocates
	// more than the heap holds live between scrapes makes the runtime
	// collect in its middle: these tell why a change moved the CPU.
	GCA, GCB       float64
	AllocA, AllocB float64
	// ConnsA, ConnsB: the connections each exporter opened to its console
	// per scrape (0 when kept connections carry every call).
	ConnsA, ConnsB float64
}

// Compare runs the steady state of o.ExporterBin (A) and other (B) side by
// side, for each number of nodes in o.Nodes: each on its own simulated
// cluster of the same seed, warmed up alike, then taking turns scrape by
// scrape, each binary's CPU read around its own scrapes only. Runs one
// after the other moved the CPU per node-scrape of one binary by a quarter
// on this machine; side by side, a drift of the machine weighs on both
// alike, so the ratio of a change is read from one run.
func Compare(o Options, other string) ([]CompareRow, error) {
	o = o.withDefaults()
	if o.ExporterBin == "" || other == "" {
		return nil, errors.New("harness: compare needs two exporter binaries")
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
	defer cancel()
	var rows []CompareRow
	for _, n := range o.Nodes {
		row, err := compareOne(ctx, o, other, n)
		if err != nil {
			return rows, fmt.Errorf("harness: compare, %d nodes: %w", n, err)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func compareOne(ctx context.Context, o Options, other string, n int) (CompareRow, error) {
	row := CompareRow{N: n, Scrapes: o.scrapesFor(n)}
	var runs [2]*exporterRun
	for i, bin := range []string{o.ExporterBin, other} {
		c, err := startCluster(n, o.Rate, o.Seed, console{profile: o.Profile, countRunning: o.CountRunning, tls: o.ConsoleTLS})
		if err != nil {
			return row, err
		}
		//nolint:revive // deferred in a loop of two: both sides run until the comparison ends
		defer c.close()
		oi := o
		oi.ExporterBin = bin
		if i == 1 {
			oi.Args = append(slices.Clone(o.Args), o.CompareArgs...)
		}
		e, err := startExporter(oi, c)
		if err != nil {
			return row, err
		}
		//nolint:revive // deferred in a loop of two: both sides run until the comparison ends
		defer e.stop()
		if _, err := e.run(ctx, 2, o.Interval); err != nil { // first contact, then one poll
			return row, fmt.Errorf("warm-up: %w", err)
		}
		// A binary that cannot talk to the console (a protocol it does
		// not speak) would be measured failing its calls, which is cheap.
		// A node that timed out at first contact on a busy machine comes
		// up at a later scrape (at the same simulated time).
		for retry := 0; retry < 5 && int(e.last.sum("indexima_up")) != n; retry++ {
			if _, err := e.run(ctx, 1, 0); err != nil {
				return row, fmt.Errorf("warm-up: %w", err)
			}
		}
		if up := e.last.sum("indexima_up"); int(up) != n {
			log := e.p.out.String()
			return row, fmt.Errorf("%s: %v of %d nodes up after the warm-up; its log ends: %s", bin, up, n, log[max(0, len(log)-600):])
		}
		runs[i] = e
	}
	fmt.Fprintf(o.Log, "N=%d: two exporters side by side (%d steady scrapes each)\n", n, row.Scrapes)
	var cpu [2]time.Duration
	var conns [2]int
	var walls [2][]time.Duration
	var gc0, alloc0 [2]float64
	for i, e := range runs {
		gc0[i], alloc0[i] = e.last.gcAndAllocs()
	}
	for range row.Scrapes {
		for i, e := range runs {
			ph, err := e.run(ctx, 1, o.Interval)
			if err != nil {
				return row, err
			}
			cpu[i] += ph.cpu
			conns[i] += ph.conns
			walls[i] = append(walls[i], ph.durations...)
		}
	}
	per := time.Duration(n * row.Scrapes)
	row.CPUA, row.CPUB = cpu[0]/per, cpu[1]/per
	row.WallA, row.WallB = median(walls[0]), median(walls[1])
	row.ConnsA, row.ConnsB = float64(conns[0])/float64(row.Scrapes), float64(conns[1])/float64(row.Scrapes)
	for i, out := range [][2]*float64{{&row.GCA, &row.AllocA}, {&row.GCB, &row.AllocB}} {
		gc, alloc := runs[i].last.gcAndAllocs()
		*out[0], *out[1] = (gc-gc0[i])/float64(row.Scrapes), (alloc-alloc0[i])/float64(row.Scrapes)
	}
	for i, rss := range []*int64{&row.RSSA, &row.RSSB} {
		m, err := readMemory(runs[i].p.pid())
		if err != nil {
			return row, err
		}
		*rss = m.RSS
	}
	return row, nil
}

// WriteCompareTable prints the rows of Compare.
func WriteCompareTable(w io.Writer, rows []CompareRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintln(tw, "N\tscrapes\tA CPU µs/node-scrape\tB CPU µs/node-scrape\tB/A\tA RSS MiB\tB RSS MiB\tA scrape ms\tB scrape ms\tA GC/scrape\tB GC/scrape\tA MiB alloc/scrape\tB MiB alloc/scrape\tA conns/scrape\tB conns/scrape\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%.2f\t%.1f\t%.1f\t%d\t%d\t%.2f\t%.2f\t%.1f\t%.1f\t%.2f\t%.2f\t\n", r.N, r.Scrapes,
			r.CPUA.Microseconds(), r.CPUB.Microseconds(), float64(r.CPUB)/float64(max(r.CPUA, 1)),
			float64(r.RSSA)/(1<<20), float64(r.RSSB)/(1<<20), r.WallA.Milliseconds(), r.WallB.Milliseconds(), r.GCA, r.GCB, r.AllocA/(1<<20), r.AllocB/(1<<20), r.ConnsA, r.ConnsB)
	}
	tw.Flush()
}
