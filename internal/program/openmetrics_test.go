package program

import (
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// What Prometheus 3 sends by default, OpenMetrics 1.0 first (and what curl
// users type to ask for OpenMetrics).
const (
	acceptPrometheus3  = "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2"
	acceptOpenMetrics1 = "application/openmetrics-text; version=1.0.0"
)

// scrape GETs url with the given Accept and Accept-Encoding headers, without
// Go's transparent decompression, and returns the Content-Type and the
// (decompressed) body.
func scrape(t *testing.T, url, accept, acceptEncoding string) (string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	resp, b := testkit.Do(t, req)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, b)
	}
	body := string(b)
	if resp.Header.Get("Content-Encoding") == "gzip" {
		body = testkit.Gunzip(t, b)
	} else if acceptEncoding == "gzip" {
		t.Errorf("GET %s with Accept-Encoding gzip: not compressed", url)
	}
	return resp.Header.Get("Content-Type"), body
}

// nodeSamples reads the samples of the node series of a text or OpenMetrics
// exposition: canonical series -> value. Left out: the exporter's own
// indexima_exporter_* and the poll cursor, which move with every scrape. Both
// formats write a sample as `name{labels} value` (no timestamps here); they
// differ in how numbers are spelled (value "1" or "1.0", le="60" or
// le="60.0"), hence the parsed floats.
func nodeSamples(t *testing.T, body string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, "indexima_") || strings.HasPrefix(line, "indexima_exporter_") ||
			strings.HasPrefix(line, "indexima_events_cursor_timestamp_seconds") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			t.Fatalf("sample line without value: %q", line)
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("sample line %q: %v", line, err)
		}
		out[canonicalSeries(t, line[:i])] = v
	}
	return out
}

var labelPair = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)

// canonicalSeries spells a series name{labels} with its labels sorted and
// the numeric labels (le, quantile) as Go formats their float.
func canonicalSeries(t *testing.T, series string) string {
	t.Helper()
	name, labels, _ := strings.Cut(series, "{")
	var pairs []string
	for _, m := range labelPair.FindAllStringSubmatch(labels, -1) {
		v := m[2]
		if m[1] == "le" || m[1] == "quantile" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %s=%q is not a number", series, m[1], v)
			}
			v = strconv.FormatFloat(f, 'g', -1, 64)
		}
		pairs = append(pairs, m[1]+"="+strconv.Quote(v))
	}
	sort.Strings(pairs)
	return name + "{" + strings.Join(pairs, ",") + "}"
}

// TestOpenMetricsWhenAsked: /metrics and /probe answer OpenMetrics 1.0 to a
// scraper that asks for it (compressed or not): the OpenMetrics content type,
// counters as families without _total, the "# EOF" end, and the same samples
// as the text format. Without an Accept header the answer stays text 0.0.4.
func TestOpenMetricsWhenAsked(t *testing.T) {
	sim := simulator.New(simulator.Config{
		Users: map[string]string{"monitor": "pw"},
		Nodes: []simulator.NodeConfig{{Host: "core-a"}, {Host: "core-b"}},
	})
	if err := sim.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	dir := t.TempDir()
	writeFile(t, dir, "password", "pw\n")
	writeFile(t, dir, "indexima.yml", "console: {url: '"+sim.URL()+"', username: monitor, password_file: password, timeout: 5s}\n"+
		"nodes: [{host: core-a, name: a}, {host: core-b, name: b}]\n")
	r := start(t, "--config.file="+filepath.Join(dir, "indexima.yml"))

	// Counted events, so that counters hold more than zeros.
	n := sim.Nodes()
	r.waitFor("/metrics", func(b string) bool { return strings.Contains(b, `indexima_up{node="a"} 1`) }, "node a up")
	sim.ReportNodeDown(n[0], n[1])
	r.waitFor("/metrics", func(b string) bool {
		return strings.Contains(b, `indexima_node_down_reports_total{down_node="2",node="a"} 1`)
	}, "the NODE_DOWN report counted")

	for _, path := range []string{"/metrics", "/probe?target=a"} {
		t.Run(path, func(t *testing.T) {
			url := r.base + path
			ct, text := scrape(t, url, "", "")
			if !strings.HasPrefix(ct, "text/plain; version=0.0.4") || strings.Contains(text, "# EOF") {
				t.Errorf("no Accept header: Content-Type %q, want text 0.0.4 without # EOF", ct)
			}
			want := nodeSamples(t, text)
			if len(want) == 0 || want[`indexima_events_total{event="NODE_DOWN",node="a"}`] != 1 {
				t.Fatalf("text exposition without the counted report:\n%s", text)
			}
			// Text with gzip: the same samples, compressed.
			ct, gz := scrape(t, url, "", "gzip")
			if !strings.HasPrefix(ct, "text/plain; version=0.0.4") || strings.Contains(gz, "# EOF") {
				t.Errorf("no Accept header, gzip: Content-Type %q, want text 0.0.4 without # EOF", ct)
			}
			if got := nodeSamples(t, gz); len(got) != len(want) || got[`indexima_events_total{event="NODE_DOWN",node="a"}`] != 1 {
				t.Errorf("text with gzip: %d node samples, %d without gzip; NODE_DOWN %v", len(got), len(want), got[`indexima_events_total{event="NODE_DOWN",node="a"}`])
			}
			for _, c := range []struct{ accept, encoding string }{
				{acceptOpenMetrics1, ""},
				{acceptOpenMetrics1, "gzip"},
				{acceptPrometheus3, "gzip"},
			} {
				ct, om := scrape(t, url, c.accept, c.encoding)
				if !strings.HasPrefix(ct, "application/openmetrics-text; version=1.0.0") {
					t.Errorf("Accept %q: Content-Type %q, want OpenMetrics 1.0.0", c.accept, ct)
				}
				if !strings.HasSuffix(om, "\n# EOF\n") || strings.Count(om, "# EOF") != 1 {
					t.Errorf("Accept %q, encoding %q: the answer does not end with one # EOF:\n...%s", c.accept, c.encoding, om[max(0, len(om)-300):])
				}
				if !strings.Contains(om, "# TYPE indexima_events counter\n") {
					t.Errorf("Accept %q: the counter family is not named without _total in OpenMetrics", c.accept)
				}
				got := nodeSamples(t, om)
				for series, v := range want {
					if g, ok := got[series]; !ok || g != v {
						t.Errorf("Accept %q: %s = %v (present %v), text says %v", c.accept, series, g, ok, v)
					}
				}
				if len(got) != len(want) {
					t.Errorf("Accept %q: %d node samples, text has %d", c.accept, len(got), len(want))
				}
			}
		})
	}
}

// TestEachPrometheusAcceptHeader sends /metrics and /probe each Accept
// header Prometheus 2.42 and 3.15 send (testkit.ScrapeAccepts), with gzip as
// they do, and checks the Content-Type of the answer, byte for byte (the
// format and its escaping scheme), and that the body is that format: text
// passes that line's `promtool check metrics`, OpenMetrics ends with one
// "# EOF", protobuf decodes. That the line's Prometheus ingests each answer
// is e2e's TestEachPrometheusAcceptHeader.
func TestEachPrometheusAcceptHeader(t *testing.T) {
	sim := simulator.New(simulator.Config{Users: map[string]string{"monitor": "pw"}, Nodes: []simulator.NodeConfig{{Host: "core-a"}}})
	if err := sim.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	dir := t.TempDir()
	writeFile(t, dir, "password", "pw\n")
	writeFile(t, dir, "indexima.yml", "console: {url: '"+sim.URL()+"', username: monitor, password_file: password, timeout: 5s}\nnodes: [{host: core-a, name: a}]\n")
	r := start(t, "--config.file="+filepath.Join(dir, "indexima.yml"))
	r.waitFor("/metrics", func(b string) bool { return strings.Contains(b, `indexima_up{node="a"} 1`) }, "node a up")

	lines := map[string]testkit.PrometheusLine{}
	for _, l := range testkit.PrometheusLines {
		lines[l.Name] = l
	}
	for _, a := range testkit.ScrapeAccepts {
		line, ok := lines[a.Line]
		if !ok {
			t.Fatalf("%s: no Prometheus line %q", a.Name, a.Line)
		}
		for _, path := range []string{"/metrics", "/probe?target=a"} {
			t.Run(a.Line+"/"+a.Name+path, func(t *testing.T) {
				ct, body := scrape(t, r.base+path, a.Accept, "gzip")
				if ct != a.ContentType {
					t.Errorf("Accept %q:\nContent-Type %q\n        want %q", a.Accept, ct, a.ContentType)
				}
				switch {
				case strings.HasPrefix(ct, "text/plain;"):
					if strings.Contains(body, "# EOF") || !strings.Contains(body, `indexima_up{node="a"} 1`) {
						t.Errorf("not a text exposition of node a:\n%s", body)
					}
					promtoolCheckMetrics(t, line.Promtool(t), body)
				case strings.HasPrefix(ct, "application/openmetrics-text;"):
					if !strings.HasSuffix(body, "\n# EOF\n") || strings.Count(body, "# EOF") != 1 || !strings.Contains(body, `indexima_up{node="a"} 1`) {
						t.Errorf("not an OpenMetrics exposition of node a ending with one # EOF:\n%s", body)
					}
				case strings.HasPrefix(ct, "application/vnd.google.protobuf;"):
					dec := expfmt.NewDecoder(strings.NewReader(body), expfmt.Format(ct))
					names := map[string]bool{}
					for {
						var mf dto.MetricFamily
						if err := dec.Decode(&mf); err == io.EOF {
							break
						} else if err != nil {
							t.Fatalf("protobuf answer: %v", err)
						}
						names[mf.GetName()] = true
					}
					if !names["indexima_up"] || !names["indexima_events_total"] {
						t.Errorf("protobuf answer without indexima_up and indexima_events_total: %v", names)
					}
				default:
					t.Errorf("unknown Content-Type %q", ct)
				}
			})
		}
	}
}

// promtoolCheckMetrics runs `promtool check metrics` of the given promtool
// on a text exposition.
func promtoolCheckMetrics(t *testing.T, promtool, exposition string) {
	t.Helper()
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(exposition)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s check metrics: %v\n%s", promtool, err, out)
	}
}
