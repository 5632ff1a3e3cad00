// Command loadharness measures indexima_exporter under load against the
// simulator on loopback, and json_exporter on the same nodes, and prints
// the tables of docs/performance.md:
//
//	go run ./bench/cmd/loadharness -n 1,10,50,200
//
// It also prints, unless -knobs=false, the table by knob of the console:
// console calls per node and scrape in the steady state and reported −
// counted at rest, with each reading of the simulated console varied alone
// (that table only: -n none); and, with -state, /probe and /metrics without
// and with the state store:
//
//	go run ./bench/cmd/loadharness -n none -json=false -state
//
// With -compare BIN, instead of the node tables, the steady state of the
// exporter and of BIN side by side (taking turns scrape by scrape), for the
// ratio of a change's CPU:
//
//	go run ./bench/cmd/loadharness -n 200,2000 -json=false -knobs=false -exporter old -compare new
//
// (-console-tls h2,http/1.1 serves the consoles over HTTPS, -console-tls h2
// as behind an HTTP/2-only front), or of one binary with and without a flag (-compare-args gives it to the
// second only):
//
//	go run ./bench/cmd/loadharness -n 200 -json=false -knobs=false -exporter bin -compare bin -compare-args --events.log=/tmp/events.log
//
// It builds the exporter from this module, and json_exporter (once, outside
// the repository, in the user cache) unless -json=false. Every phase is
// bounded in scrapes and the whole run by -timeout.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/indexima-exporter/indexima_exporter/bench/harness"
	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	fs := flag.NewFlagSet("loadharness", flag.ContinueOnError)
	nodes := fs.String("n", "1,10,50,200", "numbers of nodes, comma-separated: one row each")
	latency := fs.Duration("latency", 50*time.Millisecond, "latency of every node in the latency phase")
	latencyScrapes := fs.Int("latency-scrapes", 5, "scrapes of the latency phase (negative: none)")
	nodeScrapes := fs.Int("node-scrapes", 4000, "node-scrapes of the steady-state phase (scrapes = this / N, at least 10)")
	interval := fs.Duration("interval", 30*time.Second, "simulated time between steady-state scrapes")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the harness itself (the simulated consoles) to this file")
	rate := fs.Float64("rate", 0.05, "events per node per simulated second")
	day := fs.Bool("day", true, "run a simulated day for the largest N and report its resident memory")
	daySteps := fs.Int("day-steps", 96, "scrapes of the simulated day")
	concurrency := fs.Int("concurrency", 0, "--scrape.concurrency of the exporter (0: its default)")
	exporter := fs.String("exporter", "", "indexima_exporter binary (default: built from this module)")
	withJSON := fs.Bool("json", true, "compare with json_exporter "+harness.JSONExporterVersion)
	jsonBin := fs.String("json-exporter", "", "json_exporter binary (default: built once in "+harness.DefaultJSONExporterDir()+")")
	timeout := fs.Duration("timeout", 20*time.Minute, "bound of the whole run")
	profile := fs.String("profile", "", "console profile of the simulator for the node tables ("+strings.Join(simulator.ProfileNames(), ", ")+"; default its default)")
	countRunning := fs.Bool("count-running", false, "the simulator's event/count counts running events too (node tables)")
	consoleTLS := fs.String("console-tls", "", "serve the consoles of the node tables and of -compare over HTTPS (a private CA, given to the exporter as tls_config.ca_file), offering these protocols in ALPN, comma-separated: h2, http/1.1 (h2 alone: an HTTP/2-only front; empty: plain HTTP)")
	rates := fs.String("rates", "", "events per node per second, comma-separated (e.g. 0.2,2,20): also print the table by console profile and rate")
	rateProfiles := fs.String("rate-profiles", "all", "console profiles of the rates table, comma-separated, or all")
	rateNodes := fs.Int("rate-nodes", 3, "nodes of each run of the rates table")
	rateScrapes := fs.Int("rate-scrapes", 30, "measured scrapes of each run of the rates table (after 5 of warm-up)")
	rateInterval := fs.Duration("rate-interval", time.Second, "simulated time between scrapes of the rates table")
	knobs := fs.Bool("knobs", true, "also print the table by knob of the console (each reading of the simulator varied alone)")
	knobRows := fs.String("knob-rows", "", "rows of the knob table, ';'-separated names or unique parts of names (default: every row)")
	knobNodes := fs.Int("knob-nodes", 3, "nodes of each row of the knob table")
	knobRate := fs.Float64("knob-rate", 2, "events per node per simulated second in the knob table")
	knobInterval := fs.Duration("knob-interval", 30*time.Second, "simulated time between scrapes of the knob table")
	knobWarmUp := fs.Int("knob-warmup", 10, "scrapes of warm-up of each row of the knob table, first contact included")
	knobScrapes := fs.Int("knob-scrapes", 40, "measured steady-state scrapes of each row of the knob table")
	knobInProcess := fs.Bool("knob-inprocess", false, "run the knob table against the collector in this process (as go test does) instead of the binary")
	knobTrace := fs.String("knob-trace", "", "file to write every console call of the knob table to (implies -knob-inprocess)")
	knobDebug := fs.Bool("knob-debug", false, "the collector's debug log on stderr during the knob table (implies -knob-inprocess)")
	exporterArgs := fs.String("exporter-args", "", "more flags for the exporter of the node tables and of -compare, space-separated (e.g. --no-collector.events)")
	compare := fs.String("compare", "", "an exporter binary to run side by side with the exporter in the steady state, instead of the node tables")
	compareArgs := fs.String("compare-args", "", "more flags for the -compare exporter only, space-separated (-compare may then name the same binary, to measure what a flag costs: e.g. --events.log=/tmp/events.log)")
	state := fs.Bool("state", false, "also print the table of /probe and /metrics without and with the state store (--events.state-file)")
	stateNodes := fs.Int("state-nodes", 200, "nodes of the state store table")
	stateRounds := fs.Int("state-rounds", 30, "measured /probe rounds of the state store table (each probes every node, 16 at once)")
	stateScrapes := fs.Int("state-scrapes", 40, "measured /metrics scrapes of the state store table")
	stateRepeat := fs.Int("state-repeat", 1, "runs of each pair (without, with) of the state store table")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var ns []int
	for _, s := range strings.Split(*nodes, ",") {
		if s == "none" {
			break
		}
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 || n > 5000 {
			fmt.Fprintf(os.Stderr, "loadharness: -n: %q is not a number of nodes in 1..5000\n", s)
			return 2
		}
		ns = append(ns, n)
	}
	var rs []float64
	if *rates != "" {
		for _, s := range strings.Split(*rates, ",") {
			r, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || r < 0 || r > 1000 {
				fmt.Fprintf(os.Stderr, "loadharness: -rates: %q is not a rate in 0..1000 events/s\n", s)
				return 2
			}
			rs = append(rs, r)
		}
	}
	profiles := simulator.ProfileNames()
	if *rateProfiles != "all" {
		profiles = strings.Split(*rateProfiles, ",")
	}
	for _, p := range append([]string{*profile}, profiles...) {
		if p != "" && simulator.ProfileDoc(p) == "" {
			fmt.Fprintf(os.Stderr, "loadharness: unknown console profile %q (known: %s)\n", p, strings.Join(simulator.ProfileNames(), ", "))
			return 2
		}
	}
	var alpn []string
	if *consoleTLS != "" {
		for _, p := range strings.Split(*consoleTLS, ",") {
			if p = strings.TrimSpace(p); p != "h2" && p != "http/1.1" {
				fmt.Fprintf(os.Stderr, "loadharness: -console-tls: %q is not h2 or http/1.1\n", p)
				return 2
			}
			alpn = append(alpn, p)
		}
		if *withJSON && !slices.Contains(alpn, "http/1.1") && len(ns) > 0 && *compare == "" {
			// Tried: its client offers no h2, and the console hangs up.
			fmt.Fprintln(os.Stderr, "loadharness: json_exporter "+harness.JSONExporterVersion+" cannot talk to a console that offers only h2: add -json=false")
			return 2
		}
	}
	ko := harness.KnobOptions{Nodes: *knobNodes, Rate: *knobRate, Interval: *knobInterval, WarmUp: *knobWarmUp,
		Scrapes: *knobScrapes, Log: os.Stderr, Timeout: *timeout}
	if *knobRows != "" {
		ko.Rows = strings.Split(*knobRows, ";")
	}
	if *knobs {
		if _, err := harness.SelectKnobs(harness.Knobs(ko.PerScrape()), ko.Rows); err != nil {
			fmt.Fprintf(os.Stderr, "loadharness: -knob-rows: %v\n", err)
			return 2
		}
	}
	inProcess := *knobInProcess || *knobTrace != "" || *knobDebug
	if *knobDebug {
		ko.Logger = level.NewFilter(log.NewLogfmtLogger(log.NewSyncWriter(os.Stderr)), level.AllowDebug())
	}
	if *knobTrace != "" {
		f, err := os.Create(*knobTrace)
		if err != nil {
			fmt.Fprintf(os.Stderr, "loadharness: %v\n", err)
			return 1
		}
		defer f.Close()
		ko.Trace = f
	}
	o := harness.Options{Nodes: ns, Latency: *latency, LatencyScrapes: *latencyScrapes, NodeScrapes: *nodeScrapes,
		Interval: *interval, Rate: *rate, Day: *day, DaySteps: *daySteps, Concurrency: *concurrency,
		Profile: *profile, CountRunning: *countRunning, ConsoleTLS: alpn,
		ExporterBin: *exporter, JSONExporterBin: *jsonBin, Timeout: *timeout, Log: os.Stderr,
		Args: strings.Fields(*exporterArgs), CompareArgs: strings.Fields(*compareArgs)}
	if o.ExporterBin == "" && (len(ns) > 0 || len(rs) > 0 || *knobs && !inProcess) {
		dir, err := os.MkdirTemp("", "loadharness-bin-")
		if err != nil {
			fmt.Fprintf(os.Stderr, "loadharness: %v\n", err)
			return 1
		}
		defer os.RemoveAll(dir)
		fmt.Fprintln(os.Stderr, "building indexima_exporter")
		if o.ExporterBin, err = harness.BuildExporter(dir); err != nil {
			fmt.Fprintf(os.Stderr, "loadharness: %v\n", err)
			return 1
		}
	}
	if *cpuProfile != "" {
		// The consoles run in this process, on the exporter's cores: what
		// they cost is CPU the exporter's scrapes wait for.
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "loadharness: -cpuprofile: %v\n", err)
			return 1
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	start := time.Now()
	if *compare != "" {
		rows, err := harness.Compare(o, *compare)
		harness.WriteCompareTable(os.Stdout, rows)
		if err != nil {
			fmt.Fprintf(os.Stderr, "loadharness: %v\n", err)
			return 1
		}
		ns = nil // the node tables are replaced by the comparison
	}
	if *withJSON && o.JSONExporterBin == "" && len(ns) > 0 {
		fmt.Fprintln(os.Stderr, "json_exporter: using or building it in", harness.DefaultJSONExporterDir())
		var err error
		if o.JSONExporterBin, err = harness.EnsureJSONExporter(harness.DefaultJSONExporterDir()); err != nil {
			fmt.Fprintf(os.Stderr, "loadharness: %v (run with -json=false to skip the comparison)\n", err)
			return 1
		}
	}
	if len(ns) > 0 {
		rows, err := harness.Run(o)
		harness.WriteTable(os.Stdout, rows)
		if err != nil {
			fmt.Fprintf(os.Stderr, "loadharness: %v\n", err)
			return 1
		}
	}
	if len(rs) > 0 {
		rows, err := harness.RunRates(harness.RateOptions{Profiles: profiles, Rates: rs, Nodes: *rateNodes,
			Scrapes: *rateScrapes, Interval: *rateInterval, ExporterBin: o.ExporterBin, Log: os.Stderr, Timeout: *timeout})
		fmt.Println()
		harness.WriteRateTable(os.Stdout, rows)
		if err != nil {
			fmt.Fprintf(os.Stderr, "loadharness: %v\n", err)
			return 1
		}
	}
	if *knobs {
		if !inProcess {
			ko.ExporterBin = o.ExporterBin
		}
		rows, err := harness.RunKnobs(ko)
		fmt.Println()
		harness.WriteKnobTable(os.Stdout, ko, rows)
		writeKnobExtras(os.Stdout, rows)
		if err != nil {
			fmt.Fprintf(os.Stderr, "loadharness: %v\n", err)
			return 1
		}
	}
	if *state {
		rows, err := harness.RunState(harness.StateOptions{Nodes: *stateNodes, Rounds: *stateRounds, Scrapes: *stateScrapes,
			Repeat: *stateRepeat, Interval: *interval, Rate: *rate, ExporterBin: o.ExporterBin, Log: os.Stderr, Timeout: *timeout})
		fmt.Println()
		harness.WriteStateTable(os.Stdout, rows)
		if err != nil {
			fmt.Fprintf(os.Stderr, "loadharness: %v\n", err)
			return 1
		}
	}
	fmt.Printf("\n%d CPU(s) seen by Go, run took %s\n", numCPU(), time.Since(start).Round(time.Second))
	return 0
}

// writeKnobExtras lists, for each row of the knob table above two calls,
// the node-scrapes that cost more, and any count that missed the truth.
func writeKnobExtras(w io.Writer, rows []harness.KnobRow) {
	for _, r := range rows {
		if len(r.Extra) > 0 {
			more := ""
			if r.Over > len(r.Extra) {
				more = fmt.Sprintf(" (and %d more)", r.Over-len(r.Extra))
			}
			fmt.Fprintf(w, "%s: %s%s\n", r.Name, strings.Join(r.Extra, "; "), more)
		}
		if len(r.WrongTypes) > 0 {
			fmt.Fprintf(w, "%s: counted - truth by type: %s\n", r.Name, strings.Join(r.WrongTypes, "; "))
		}
	}
}
