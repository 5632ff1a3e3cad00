package harness

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

func mib(b int64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }

func us(d time.Duration) string { return fmt.Sprintf("%.0f", float64(d)/float64(time.Microsecond)) }

func ms(d time.Duration) string { return fmt.Sprintf("%.0f", float64(d)/float64(time.Millisecond)) }

// WriteTable prints the rows as aligned tables (Markdown-compatible).
func WriteTable(w io.Writer, rows []Row) {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintln(w, "indexima_exporter, steady state (no added latency)")
	fmt.Fprintln(tw, "N\tscrapes\tconsole req/node/scrape (max)\tlogins\tCPU µs/node-scrape\tRSS MiB\tseries/node\tcounted\treported\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%d\t%.2f (%.2f)\t%d\t%s\t%s\t%d\t%.0f\t%.0f\t\n", r.N, r.Scrapes, r.RequestsPerNodeScrape,
			r.MaxRequestsPerNodeScrape, r.Logins, us(r.CPUPerNodeScrape), mib(r.RSS), r.SeriesPerNode, r.Counted, r.Reported)
	}
	tw.Flush()
	if len(rows) > 0 && rows[0].Latency > 0 {
		fmt.Fprintf(w, "\nindexima_exporter, every node answering %s late (target: scrape <= 1.3 x the slowest node's own round trips)\n", rows[0].Latency)
		fmt.Fprintln(tw, "N\tscrape median ms\tscrape max ms\tslowest node's calls\tratio median (max)\t")
		for _, r := range rows {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%.2f (%.2f)\t\n", r.N, ms(r.ScrapeMedian), ms(r.ScrapeMax), r.SlowestNodeCalls, r.LatencyRatio, r.LatencyRatioMax)
		}
		tw.Flush()
	}
	if len(rows) > 0 && rows[0].JSON != nil {
		fmt.Fprintln(w, "\njson_exporter "+JSONExporterVersion+" on the same nodes (fixed lastevents listing, one /probe per node)")
		fmt.Fprintln(tw, "N\tprobes\tconsole req/node/scrape\tCPU µs/node-scrape\tRSS MiB\tseries/node\tfailed\tCPU ratio json/indexima\t")
		for _, r := range rows {
			j := r.JSON
			ratio := "n/a"
			if r.CPUPerNodeScrape > 0 {
				ratio = fmt.Sprintf("%.1fx", float64(j.CPUPerNodeScrape)/float64(r.CPUPerNodeScrape))
			}
			fmt.Fprintf(tw, "%d\t%d\t%.2f\t%s\t%s\t%d\t%d\t%s\t\n", r.N, j.Probes, j.RequestsPerNodeScrape,
				us(j.CPUPerNodeScrape), mib(j.RSS), j.SeriesPerNode, j.Failed, ratio)
		}
		tw.Flush()
	}
	for _, r := range rows {
		if d := r.Day; d != nil {
			fmt.Fprintf(w, "\nindexima_exporter, N=%d over a simulated day (%d scrapes): RSS median %s MiB over the second half, last %s MiB, peak %s MiB (target < 40); CPU %s µs/node-scrape; events counted %.0f, reported %.0f\n",
				r.N, d.Scrapes, mib(d.MedianRSS), mib(d.RSS), mib(d.PeakRSS), us(d.CPUPerNodeScrape), d.EventsCounted, d.EventsReported)
		}
	}
	for _, r := range rows {
		if len(r.RequestsByEndpoint) > 0 {
			var parts []string
			for _, ep := range []string{"login", "version", "events", "lastevents", "event_count", "event_asc", "event_desc", "columns"} {
				if v := r.RequestsByEndpoint[ep]; v > 0 {
					parts = append(parts, fmt.Sprintf("%s=%d", ep, v))
				}
			}
			fmt.Fprintf(w, "N=%d steady-state console calls: %s\n", r.N, strings.Join(parts, " "))
		}
	}
}
