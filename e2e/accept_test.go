package e2e

import (
	"cmp"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// TestEachPrometheusAcceptHeader has each tested Prometheus line scrape the
// exporter with every Accept header it can send (testkit.ScrapeAccepts):
// one job per header, set up as the header's Flags and Job say, each
// through a loopback proxy that records the Accept sent and the
// Content-Type answered. For each job: Prometheus sent exactly the header
// of the table (so that the table, which internal/program's test of the
// same name also uses, is what the binary sends), the exporter answered
// exactly the table's Content-Type, every scrape succeeded, and Prometheus
// stored every node up and the same node series as the other jobs of its
// line: each answer parsed with that Prometheus.
func TestEachPrometheusAcceptHeader(t *testing.T) {
	for _, line := range testkit.PrometheusLines {
		t.Run(line.Name, func(t *testing.T) {
			promBin := line.Prometheus(t)
			bin := testkit.ExporterBinary(t)
			dir := t.TempDir()
			sim := simulator.New(simulator.Config{
				Users: map[string]string{consoleUser: consolePassword},
				Nodes: []simulator.NodeConfig{{Host: "node1.test"}, {Host: "node2.test"}},
			})
			if err := sim.Start("127.0.0.1:0"); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { sim.Close() })
			exp := newExporter(t, bin, dir, sim)
			exp.start(t)
			// First contact, then a NODE_DOWN report: a counter at 1 in
			// every job.
			keys := sim.Nodes()
			if resp, err := http.Get("http://" + exp.addr + "/metrics"); err != nil {
				t.Fatal(err)
			} else {
				resp.Body.Close()
			}
			sim.ReportNodeDown(keys[0], keys[1])

			// One Prometheus per set of flags (2.42's protobuf is a
			// feature flag), one job per header.
			type job struct {
				testkit.ScrapeAccept
				proxy *recordingProxy
			}
			byFlags := map[string][]*job{}
			var order []string
			for _, a := range testkit.ScrapeAccepts {
				if a.Line != line.Name {
					continue
				}
				flags := strings.Join(a.Flags, " ")
				if _, ok := byFlags[flags]; !ok {
					order = append(order, flags)
				}
				byFlags[flags] = append(byFlags[flags], &job{ScrapeAccept: a, proxy: newRecordingProxy(t, exp.addr)})
			}
			if len(order) == 0 {
				t.Fatalf("no Accept header of Prometheus %s in testkit.ScrapeAccepts", line.Name)
			}
			lineCount := "" // node series per job, the same across the line's Prometheus runs
			for _, flags := range order {
				jobs := byFlags[flags]
				var cfg strings.Builder
				for _, j := range jobs {
					fmt.Fprintf(&cfg, "  - job_name: %s\n%s    static_configs:\n      - targets: [%q]\n", j.Name, j.Job, j.proxy.addr)
				}
				prom := startPrometheusFlags(t, promBin, t.TempDir(), jobs[0].Flags, nil, cfg.String())
				for _, j := range jobs {
					waitQuery(t, prom, fmt.Sprintf(`count(indexima_up{job=%q} == 1) == %d`, j.Name, len(keys)), 30*time.Second)
					waitQuery(t, prom, fmt.Sprintf(`sum(indexima_node_down_reports_total{job=%q}) == 1`, j.Name), 30*time.Second)
				}
				prom.checkScrapesClean(t)
				for _, j := range jobs {
					if got := j.proxy.acceptHeaders(); len(got) != 1 || got[j.Accept] == 0 {
						t.Errorf("job %s: Prometheus %s sent Accept %q, want only %q", j.Name, line.Name, keysOf(got), j.Accept)
					}
					if got := j.proxy.contentTypes(); len(got) != 1 || got[j.ContentType] == 0 {
						t.Errorf("job %s: the exporter answered %q, want only %q", j.Name, keysOf(got), j.ContentType)
					}
				}
				// The same node series in every job: count them per job
				// (the exporter's own and the poll cursor left out, as
				// they move with every scrape).
				var counts, count string
				eventually(t, 30*time.Second, "the same node series in every job", func() bool {
					s, err := prom.query(`count by (job) ({__name__=~"indexima_.+", __name__!~"indexima_exporter_.+"})`)
					if err != nil || len(s) != len(jobs) {
						counts = fmt.Sprintf("%d jobs, err %v", len(s), err)
						return false
					}
					seen := map[string]bool{}
					var parts []string
					for _, smp := range s {
						v, _ := smp.Value[1].(string)
						seen[v] = true
						parts = append(parts, smp.Metric["job"]+"="+v)
					}
					sort.Strings(parts)
					counts = strings.Join(parts, ", ")
					count, _ = s[0].Value[1].(string)
					return len(seen) == 1 && (lineCount == "" || count == lineCount)
				}, func() string {
					return fmt.Sprintf("%s (earlier runs of Prometheus %s: %s)", counts, line.Name, lineCount)
				})
				lineCount = count
				t.Logf("Prometheus %s %s: %d job(s) scraped cleanly, node series per job: %s", line.Name, cmp.Or(flags, "(no flag)"), len(jobs), counts)
			}
		})
	}
}

func keysOf(m map[string]int) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
