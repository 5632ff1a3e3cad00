package e2e

import (
	"fmt"
	"maps"
	"math"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/dashboards"
	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// formatJob is one scrape job of TestScrapeFormatsAndNativeHistograms: the
// protocols it lets Prometheus ask for, and the content type the exporter
// must answer with.
type formatJob struct {
	name, protocols, extra, contentType string
	proxy                               *recordingProxy
}

// TestScrapeFormatsAndNativeHistograms has Prometheus 3 scrape one exporter
// as four jobs, each through a loopback proxy that records the content type
// the exporter answered:
//
//   - openmetrics, protobuf, text: scrape_protocols limited to OpenMetrics
//     1.0, protobuf, and text 0.0.4. Each job must get that format, with no
//     scrape error, and every node series must hold the same value in the
//     three.
//   - nhcb: OpenMetrics with convert_classic_histograms_to_nhcb, so that the
//     duration histograms are stored as native histograms with custom buckets
//     instead of _bucket/_sum/_count series. Every histogram query of the
//     dashboards must return the same numbers from it as from the classic
//     buckets of the text job.
//
// It also logs the series stored per node in each case (docs/performance.md).
func TestScrapeFormatsAndNativeHistograms(t *testing.T) {
	line := testkit.PrometheusLine3()
	promBin := line.Prometheus(t)
	dir := t.TempDir()
	bin := testkit.ExporterBinary(t)

	sim := simulator.New(simulator.Config{
		Users: map[string]string{consoleUser: consolePassword},
		Nodes: []simulator.NodeConfig{{Host: "node1.test"}, {Host: "node2.test"}, {Host: "node3.test"}},
	})
	if err := sim.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	keys := sim.Nodes()
	exp := newExporter(t, bin, dir, sim)
	exp.start(t)

	const openMetrics = "application/openmetrics-text; version=1.0.0"
	jobs := []*formatJob{
		{name: "openmetrics", protocols: "[OpenMetricsText1.0.0]", contentType: openMetrics},
		{name: "protobuf", protocols: "[PrometheusProto]",
			contentType: "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited"},
		{name: "text", protocols: "[PrometheusText0.0.4]", contentType: "text/plain; version=0.0.4"},
		{name: "nhcb", protocols: "[OpenMetricsText1.0.0]", extra: "convert_classic_histograms_to_nhcb: true", contentType: openMetrics},
	}
	var cfg strings.Builder
	for _, j := range jobs {
		j.proxy = newRecordingProxy(t, exp.addr)
		fmt.Fprintf(&cfg, "  - job_name: %s\n    scrape_protocols: %s\n", j.name, j.protocols)
		if j.extra != "" {
			fmt.Fprintf(&cfg, "    %s\n", j.extra)
		}
		fmt.Fprintf(&cfg, "    static_configs:\n      - targets: [%q]\n", j.proxy.addr)
	}
	prom := startPrometheus(t, promBin, dir, nil, cfg.String())
	waitQuery(t, prom, `count(indexima_up == 1) == 12`, 30*time.Second)

	// Events with durations in several buckets on every node, and a
	// NODE_DOWN report: counters, histograms and a labelled pair to compare.
	// Twice, the second batch a rate interval after the first: the
	// histogram queries below then see increases of series that began before
	// their window, which Prometheus extrapolates alike for every bucket and
	// for a native histogram (at a series' start, rate() stops a bucket's
	// extrapolation where that bucket would reach zero, a native histogram's
	// where its count would: the numbers would differ for that reason alone).
	durations := []int64{5, 50, 300, 1200, 2000} // ms: le 0.01, 0.1, 0.5, 2.5
	const rateInterval = 15 * time.Second
	batch := func(n int) {
		t.Helper()
		for _, k := range keys {
			table := sim.Tables(k)[0]
			for _, d := range durations {
				sim.Append(k, simulator.Event{Type: simulator.TableLoaded, Duration: d, Comment: table})
			}
		}
		want := n * len(keys) * len(durations)
		for _, j := range jobs {
			waitQuery(t, prom, fmt.Sprintf(`sum(indexima_events_total{job=%q, event="TABLE_LOADED"}) == %d`, j.name, want), 30*time.Second)
		}
	}
	sim.ReportNodeDown(keys[0], keys[1])
	batch(1)
	firstAt := time.Now()
	waitQuery(t, prom, fmt.Sprintf(`min(timestamp(indexima_up)) > %.3f`,
		float64(firstAt.Add(rateInterval+time.Second).UnixMilli())/1000), rateInterval+30*time.Second)
	batch(2)
	t.Run("each job got the format it asked for, without scrape error", func(t *testing.T) {
		for _, j := range jobs {
			got := j.proxy.contentTypes()
			if len(got) == 0 {
				t.Errorf("job %s: no scrape went through its proxy", j.name)
			}
			for ct := range got {
				if !strings.HasPrefix(ct, j.contentType) {
					t.Errorf("job %s (scrape_protocols %s): the exporter answered %q, want %q", j.name, j.protocols, ct, j.contentType)
				}
			}
		}
		prom.checkScrapesClean(t)
	})

	t.Run("the same values in OpenMetrics, protobuf and text", func(t *testing.T) {
		// Node series only: the exporter's own metrics and the poll cursor
		// move with every scrape. Each job polls on its own scrapes, so wait
		// until every job has scraped since the last event was counted.
		sel := func(job string) string {
			return fmt.Sprintf(`{__name__=~"indexima_.+", __name__!~"indexima_exporter_.+|indexima_events_cursor_timestamp_seconds", job=%q}`, job)
		}
		var diff string
		eventually(t, 30*time.Second, "the three formats agree", func() bool {
			text, err := seriesValues(prom, sel("text"))
			if err != nil || len(text) == 0 {
				diff = fmt.Sprintf("text: %d series, err %v", len(text), err)
				return false
			}
			for _, job := range []string{"openmetrics", "protobuf"} {
				got, err := seriesValues(prom, sel(job))
				if err != nil {
					diff = err.Error()
					return false
				}
				if d := compareSeries(got, text); d != "" {
					diff = job + " vs text: " + d
					return false
				}
			}
			t.Logf("%d node series, equal in the three formats", len(text))
			return true
		}, func() string { return diff })
	})

	t.Run("dashboard histogram panels give the same numbers on converted histograms", func(t *testing.T) {
		n := func(expr string) float64 {
			s, err := prom.query(expr)
			if err != nil || len(s) != 1 {
				t.Fatalf("%s: %d samples, err %v", expr, len(s), err)
			}
			return sampleValue(t, s[0])
		}
		if c, err := prom.query(`{__name__=~"indexima_event_duration_seconds_(bucket|sum|count)", job="nhcb"}`); err != nil || len(c) != 0 {
			t.Errorf("job nhcb stored %d classic histogram series (err %v); the conversion should replace them", len(c), err)
		}
		if c, err := prom.query(`indexima_event_duration_seconds{job="nhcb"}`); err != nil || len(c) == 0 {
			t.Fatalf("job nhcb stored no native histogram (err %v)", err)
		}
		perNode := func(job string) float64 {
			return n(fmt.Sprintf(`count({job=%q, node="node1"})`, job))
		}
		classic, converted := perNode("text"), perNode("nhcb")
		t.Logf("series stored for one node: %v with classic histograms, %v with convert_classic_histograms_to_nhcb", classic, converted)
		if converted >= classic {
			t.Errorf("converted histograms store %v series per node, classic %v: want fewer", converted, classic)
		}

		ds, err := dashboards.Load(dashboards.Files)
		if err != nil {
			t.Fatal(err)
		}
		vals := dashboards.AllValues(ds)
		// The second batch is inside the rate interval, the first before it.
		maps.Copy(vals, dashboards.Builtins(fmt.Sprintf("%ds", int(rateInterval/time.Second)), "5m"))
		checked := 0
		for _, d := range ds {
			for _, q := range d.Queries() {
				if !strings.Contains(q.Expr, "histogram_") {
					continue
				}
				byJob := map[string]map[string]float64{}
				for _, job := range []string{"text", "nhcb"} {
					vals["job"] = job
					expr, err := dashboards.Substitute(q.Expr, vals)
					if err != nil {
						t.Fatalf("%s %s: %v", q.Dashboard, q.Where, err)
					}
					got, err := seriesValues(prom, expr)
					if err != nil {
						t.Fatalf("%s %s: %v", q.Dashboard, q.Where, err)
					}
					if len(got) == 0 {
						t.Errorf("%s %s: no data from job %s\n%s", q.Dashboard, q.Where, job, expr)
					}
					byJob[job] = got
				}
				checked++
				// The exporter's own API-call histogram moves with every poll,
				// and each job polls on its own scrapes: its numbers differ
				// between jobs by nature. The node histograms hold the same
				// events in both jobs.
				if !strings.Contains(q.Expr, "indexima_event_duration_seconds") {
					continue
				}
				if d := compareSeriesWithin(byJob["nhcb"], byJob["text"], 1e-6); d != "" {
					t.Errorf("%s %s: converted histograms vs classic buckets: %s", q.Dashboard, q.Where, d)
				}
				numbers := 0
				for _, v := range byJob["text"] {
					if v > 0 && !math.IsInf(v, 0) {
						numbers++
					}
				}
				if numbers == 0 {
					t.Errorf("%s %s: no duration in %v (want the TABLE_LOADED events in the window)", q.Dashboard, q.Where, byJob["text"])
				}
			}
		}
		if checked == 0 {
			t.Fatal("no histogram query in the dashboards")
		}
		t.Logf("%d dashboard histogram queries return data on classic and converted histograms, the same numbers for the node histograms", checked)
	})
}

// seriesValues runs an instant query and returns its samples by label set,
// without job and instance (the jobs compared scrape the same exporter
// through different proxies).
func seriesValues(prom *prometheusServer, expr string) (map[string]float64, error) {
	s, err := prom.query(expr)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, smp := range s {
		m := maps.Clone(smp.Metric)
		delete(m, "job")
		delete(m, "instance")
		str, _ := smp.Value[1].(string)
		v, err := parseValue(str)
		if err != nil {
			return nil, fmt.Errorf("%s: sample %v: %v", expr, smp.Value, err)
		}
		out[labelString(m)] = v
	}
	return out, nil
}

func parseValue(s string) (float64, error) {
	var v float64
	switch s {
	case "NaN":
		return math.NaN(), nil
	case "+Inf":
		return math.Inf(1), nil
	case "-Inf":
		return math.Inf(-1), nil
	}
	_, err := fmt.Sscan(s, &v)
	return v, err
}

func labelString(m map[string]string) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%q", k, m[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// compareSeries describes how got differs from want (empty: equal).
func compareSeries(got, want map[string]float64) string {
	return compareSeriesWithin(got, want, 0)
}

// compareSeriesWithin is compareSeries with a relative tolerance.
func compareSeriesWithin(got, want map[string]float64, tolerance float64) string {
	var d []string
	for s, w := range want {
		g, ok := got[s]
		switch {
		case !ok:
			d = append(d, "missing "+s)
		case math.Abs(g-w) > tolerance*math.Max(math.Abs(g), math.Abs(w)) && !(math.IsNaN(g) && math.IsNaN(w)):
			d = append(d, fmt.Sprintf("%s = %v, want %v", s, g, w))
		}
	}
	for s := range got {
		if _, ok := want[s]; !ok {
			d = append(d, "extra "+s)
		}
	}
	sort.Strings(d)
	if len(d) > 10 {
		d = append(d[:10], fmt.Sprintf("... %d differences", len(d)))
	}
	return strings.Join(d, "; ")
}

// recordingProxy is a loopback reverse proxy to the exporter that records
// the Accept header of every request and the Content-Type of every answer.
type recordingProxy struct {
	addr    string
	mu      sync.Mutex
	seen    map[string]int // Content-Types
	accepts map[string]int
}

func newRecordingProxy(t *testing.T, upstream string) *recordingProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &recordingProxy{addr: l.Addr().String(), seen: map[string]int{}, accepts: map[string]int{}}
	target := &url.URL{Scheme: "http", Host: upstream}
	rp := &httputil.ReverseProxy{}
	rp.Rewrite = func(r *httputil.ProxyRequest) {
		p.mu.Lock()
		p.accepts[r.In.Header.Get("Accept")]++
		p.mu.Unlock()
		r.SetURL(target)
		r.Out.Host = r.In.Host // as Prometheus addressed it (what Director did)
	}
	rp.ModifyResponse = func(r *http.Response) error {
		p.mu.Lock()
		p.seen[r.Header.Get("Content-Type")]++
		p.mu.Unlock()
		return nil
	}
	srv := &http.Server{Handler: rp, ReadHeaderTimeout: 10 * time.Second}
	// ErrServerClosed once the cleanup closes it; nothing else to say.
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { srv.Close() })
	return p
}

func (p *recordingProxy) contentTypes() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.seen)
}

func (p *recordingProxy) acceptHeaders() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.accepts)
}
