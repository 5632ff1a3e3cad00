package harness

import (
	"io"
	"time"
)

// Options of a harness run. Zero fields get the defaults of withDefaults.
type Options struct {
	Nodes []int // numbers of nodes to run, one table row each; default 1, 10, 50, 200

	// Steady-state phase: the simulated clock moves Interval between
	// scrapes, nodes log Rate events per simulated second. The number of
	// scrapes is NodeScrapes/N, within [MinScrapes, MaxScrapes], so that the
	// CPU measured is far above the 10 ms resolution of /proc/PID/stat.
	Interval    time.Duration // default 30s
	Rate        float64       // default 0.05 (a busy node: 1.5 events per 30 s); negative: none
	NodeScrapes int           // default 4000
	MinScrapes  int           // default 10
	MaxScrapes  int           // default 4000

	// Latency phase: every node answers Latency late; LatencyScrapes scrapes.
	Latency        time.Duration // default 50ms
	LatencyScrapes int           // default 5; negative: no latency phase

	// Day phase, run for the largest N: a simulated day in DaySteps scrapes,
	// then the exporter's resident memory is read.
	Day      bool
	DaySteps int // default 96 (one scrape per 15 simulated minutes)

	// Concurrency is passed as --scrape.concurrency when > 0.
	Concurrency int

	// Profile is the simulator's console profile ("": its default) and
	// CountRunning whether event/count counts running events.
	Profile      string
	CountRunning bool
	// ConsoleTLS, when set, serves the consoles of the node tables and of
	// Compare over HTTPS offering these protocols in ALPN ("h2",
	// "http/1.1"), with a private CA given to the exporter as its
	// tls_config.ca_file.
	ConsoleTLS []string

	ExporterBin     string   // required
	Args            []string // more flags for the exporter
	CompareArgs     []string // more flags for the second exporter of Compare only
	JSONExporterBin string   // empty: no comparison
	JSONEvents      int      // events in json_exporter's fixed listing; default 50
	JSONParallel    int      // probes at once against json_exporter; default 16

	Seed int64
	Log  io.Writer // progress lines; nil: none

	// Timeout bounds the whole run; default 20m.
	Timeout time.Duration
}

func (o Options) withDefaults() Options {
	if len(o.Nodes) == 0 {
		o.Nodes = []int{1, 10, 50, 200}
	}
	if o.Interval <= 0 {
		o.Interval = 30 * time.Second
	}
	switch {
	case o.Rate == 0:
		o.Rate = 0.05
	case o.Rate < 0:
		o.Rate = 0
	}
	if o.NodeScrapes <= 0 {
		o.NodeScrapes = 4000
	}
	if o.MinScrapes <= 0 {
		o.MinScrapes = 10
	}
	if o.MaxScrapes <= 0 {
		o.MaxScrapes = 4000
	}
	if o.Latency <= 0 {
		o.Latency = 50 * time.Millisecond
	}
	if o.LatencyScrapes == 0 {
		o.LatencyScrapes = 5
	}
	if o.DaySteps <= 0 {
		o.DaySteps = 96
	}
	if o.JSONEvents <= 0 {
		o.JSONEvents = 50
	}
	if o.JSONParallel <= 0 {
		o.JSONParallel = 16
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

// scrapesFor is the number of steady-state scrapes for n nodes.
func (o Options) scrapesFor(n int) int {
	s := (o.NodeScrapes + n - 1) / n
	return max(o.MinScrapes, min(s, o.MaxScrapes))
}
