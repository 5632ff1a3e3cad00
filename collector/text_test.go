package collector

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// The Accept headers of the scrapers the text answer is checked against.
var textAccepts = map[string]string{
	"none":         "",
	"prometheus-2": "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
	"prometheus-3": "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2",
	"text-1.0.0":   "text/plain;version=1.0.0;escaping=underscores",
}

// The text answer is byte for byte what promhttp's handler writes for the
// families of the same polls (familySink's, joined with families gathered
// elsewhere), with the same Content-Type, for the Accept headers of
// Prometheus 2 and 3 and others, and in turns (two servers of different
// lines), scrape after scrape: lines kept from the scrape before, written
// anew when their series changed. Only the sub-collectors' durations,
// timed at each emission, are set to 0 on both sides.
func TestTextIsWhatPromhttpWrites(t *testing.T) {
	others := []*dto.MetricFamily{ // named to sort before, among and after the nodes' families
		gaugeFamily("aaa_first", 1), gaugeFamily("indexima_exporter_build_info", 1), gaugeFamily("zzz_last", 3),
	}
	turns := map[string][]string{"in-turns": {"prometheus-2", "prometheus-3", "none"}}
	for name := range textAccepts {
		turns[name] = []string{name}
	}
	for name, accepts := range turns {
		for _, named := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/cluster-label=%v", name, named), func(t *testing.T) {
				var s familySink
				kept := 0
				scenario(t, named, 12, func(e *env, step int) {
					accept := textAccepts[accepts[step%len(accepts)]]
					format := negotiate(accept)
					if !TextFormat(format) {
						t.Fatalf("%q negotiates %s, not a text format", accept, format)
					}
					ts, ok := e.exp.ScrapeText(context.Background(), format)
					if !ok {
						t.Fatal("ScrapeText refused a scrape with none under way")
					}
					defer ts.Close()
					zeroDurations(ts.c.scrape.gathered())
					// What promhttp writes for the same outcome (no poll
					// has run since: the nodes' committed states are
					// those written).
					s.reset()
					e.exp.emit(&s, e.exp.seriesOf(e.p.Current()), ts.results)
					fams := append(append([]*dto.MetricFamily(nil), s.gathered()...), others...)
					sortFamilies(fams)
					zeroDurations(fams)
					want, wantType := promhttpAnswer(t, accept, fams)

					var b bytes.Buffer
					if err := ts.WriteTo(&b, others); err != nil {
						t.Fatal(err)
					}
					if got := b.String(); got != want {
						t.Fatalf("step %d: the text answer differs from promhttp's:\n%s", step, firstDifference(got, want))
					}
					if string(format) != wantType {
						t.Fatalf("step %d: Content-Type %q, promhttp's %q", step, format, wantType)
					}
					k, _ := ts.c.chunkCounts()
					kept += k
				})
				// A scrape in another format than the scrape before
				// writes every line anew: in turns, nothing is kept.
				if len(accepts) == 1 && kept == 0 {
					t.Error("no line was ever kept from a scrape to the next")
				}
			})
		}
	}
}

// A steady scrape writes few lines anew: with no new event, a node's
// series change in a few families only (its poll's duration, the cursor's
// timestamp), so most chunks are kept.
func TestTextKeepsWhatDidNotChange(t *testing.T) {
	e := newEnv(t, simulator.Config{Seed: 5, Rate: 2}, 3, testOptions{Enabled: map[string]bool{"columns": true}})
	e.clock.Advance(5 * time.Minute) // events of several types, then none: the clock stays
	format := negotiate(textAccepts["prometheus-3"])
	scrape := func() (kept, written int) {
		ts, ok := e.exp.ScrapeText(context.Background(), format)
		if !ok {
			t.Fatal("ScrapeText refused a scrape with none under way")
		}
		defer ts.Close()
		var b bytes.Buffer
		if err := ts.WriteTo(&b, nil); err != nil {
			t.Fatal(err)
		}
		return ts.c.chunkCounts()
	}
	scrape() // first contact
	scrape()
	kept, written := scrape()
	t.Logf("a steady scrape: %d chunks kept, %d written", kept, written)
	if kept == 0 || written*4 > kept {
		t.Fatalf("a steady scrape kept %d chunks and wrote %d anew: want at least four kept for one written", kept, written)
	}
}

// negotiate is the format promhttp answers a request with accept in.
func negotiate(accept string) expfmt.Format {
	req := httptest.NewRequest("GET", "/metrics", nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	return expfmt.NegotiateAccept(req.Header, expfmt.DefaultOpenMetricsAcceptedFormats()...)
}

// promhttpAnswer is the body and Content-Type promhttp's handler answers
// with for mfs to a request with accept, uncompressed.
func promhttpAnswer(t *testing.T, accept string, mfs []*dto.MetricFamily) (string, string) {
	t.Helper()
	h := promhttp.HandlerFor(prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return mfs, nil }),
		promhttp.HandlerOpts{EnableOpenMetrics: true, DisableCompression: true})
	req := httptest.NewRequest("GET", "/metrics", nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("promhttp answered %d: %s", rec.Code, rec.Body)
	}
	return rec.Body.String(), rec.Header().Get("Content-Type")
}

func gaugeFamily(name string, v float64) *dto.MetricFamily {
	return &dto.MetricFamily{Name: proto.String(name), Help: proto.String("A family gathered elsewhere."),
		Type: dto.MetricType_GAUGE.Enum(), Metric: []*dto.Metric{{Gauge: &dto.Gauge{Value: proto.Float64(v)}}}}
}

func sortFamilies(mfs []*dto.MetricFamily) {
	for i := 1; i < len(mfs); i++ {
		for j := i; j > 0 && mfs[j].GetName() < mfs[j-1].GetName(); j-- {
			mfs[j], mfs[j-1] = mfs[j-1], mfs[j]
		}
	}
}

func zeroDurations(mfs []*dto.MetricFamily) {
	for _, mf := range mfs {
		if mf.GetName() == collectorDurationDesc.name {
			for _, m := range mf.Metric {
				m.Gauge.Value = proto.Float64(0)
			}
		}
	}
}

func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d:\n got %s\nwant %s", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("got %d lines, want %d", len(g), len(w))
}

// A scrape that meets another writing its text (two Prometheus servers at
// the same moment) is refused, so that it goes through ScrapeGatherer, and
// the next one after Close is served.
func TestTextScrapeIsOneAtATime(t *testing.T) {
	e := newEnv(t, simulator.Config{Seed: 5, Rate: 2}, 2, testOptions{})
	format := negotiate(textAccepts["prometheus-3"])
	ts, ok := e.exp.ScrapeText(context.Background(), format)
	if !ok {
		t.Fatal("ScrapeText refused a scrape with none under way")
	}
	if _, ok := e.exp.ScrapeText(context.Background(), format); ok {
		t.Fatal("ScrapeText served a second scrape while the first was writing")
	}
	ts.Close()
	ts, ok = e.exp.ScrapeText(context.Background(), format)
	if !ok {
		t.Fatal("ScrapeText refused a scrape after the first was closed")
	}
	ts.Close()
}

// chunkCounts is what the latest scrape did with the nodes' chunks: kept
// from the scrape before, and written anew.
func (c *textCache) chunkCounts() (kept, written int) {
	for _, nt := range c.nodes {
		kept += len(nt.chunks) - nt.written
		written += nt.written
	}
	return kept, written
}
