package harness

import "time"

// Row is what the harness measured for one number of nodes.
type Row struct {
	N       int
	Scrapes int // steady-state scrapes of the exporter

	// The exporter, steady state (no injected latency).
	RequestsPerNodeScrape    float64 // console calls per node per scrape, mean over nodes
	MaxRequestsPerNodeScrape float64 // the busiest node's
	RequestsByEndpoint       map[string]int
	Logins                   int // over the whole run, warm-up included
	CPUPerNodeScrape         time.Duration
	RSS                      int64 // after the steady state, bytes
	Counted, Reported        float64
	SeriesPerNode            int

	// The exporter with every node answering Latency late.
	Latency          time.Duration
	ScrapeMedian     time.Duration
	ScrapeMax        time.Duration
	SlowestNodeCalls int     // most calls one node made in one scrape (2 in the steady state)
	LatencyRatio     float64 // median over scrapes of duration / (slowest node's calls x Latency); target <= 1.3
	LatencyRatioMax  float64

	JSON *JSONRow // nil when no comparison was run
	Day  *DayRow  // for the largest N when Options.Day
}

// JSONRow is json_exporter on the same nodes.
type JSONRow struct {
	Probes                int // node-scrapes (one /probe each)
	RequestsPerNodeScrape float64
	CPUPerNodeScrape      time.Duration
	RSS                   int64
	SeriesPerNode         int
	Failed                int // probes that did not answer 200
}

// DayRow is the exporter after a simulated day.
type DayRow struct {
	Scrapes          int
	Simulated        time.Duration
	EventsCounted    float64
	EventsReported   float64
	RSS              int64 // after the last scrape
	MedianRSS        int64 // median after each scrape of the second half of the day
	PeakRSS          int64 // VmHWM: the highest resident memory of the process
	CPUPerNodeScrape time.Duration
}
