package collector

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"

	"github.com/indexima-exporter/indexima_exporter/internal/gzchunk"
	"github.com/indexima-exporter/indexima_exporter/poller"
)

// The encoded answer, decompressed, is byte for byte what promhttp writes
// for the families of the same poll (familySink's, joined with families
// gathered elsewhere), in both text formats (and in turns, as two servers
// of different lines ask), scrape after scrape: lines
// reused from the scrape before, encoded anew when their series changed;
// every piece of compressAtOnce bytes or more compressed. Only the sub-collectors' durations, timed at each
// emission, are set to 0 on both sides.
func TestEncodedIsWhatPromhttpWrites(t *testing.T) {
	others := []*dto.MetricFamily{ // named to sort before, among and after the nodes' families
		gaugeFamily("aaa_first", 1), gaugeFamily("indexima_exporter_build_info", 1), gaugeFamily("zzz_last", 3),
	}
	text, om := expfmt.NewFormat(expfmt.TypeTextPlain), expfmt.NewFormat(expfmt.TypeOpenMetrics)
	for name, formats := range map[string][]expfmt.Format{"text": {text}, "openmetrics": {om}, "both-in-turns": {text, om}} {
		for _, named := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/cluster-label=%v", name, named), func(t *testing.T) {
				comp := gzchunk.NewCompressor()
				var s familySink
				compressed := 0
				scenario(t, named, 12, func(e *env, step int) {
					format := formats[step%len(formats)]
					// Every third step a scrape encodes each node as its
					// poll ends (ScrapeEncoded); the others encode the
					// results of polls already done (a scrape that met
					// another one encoding).
					var (
						enc      Encoded
						clusters []*clusterSeries
						results  []poller.Result
					)
					if step%3 == 2 {
						enc, results = e.exp.scrapeEncoded(context.Background(), format)
						clusters = e.exp.seriesOf(e.p.Current())
					} else {
						clusters, results = e.pollAll()
						enc = e.exp.encode(format, clusters, results)
					}
					zeroDurations(enc.Scrape)
					// What promhttp writes for the same outcome (no poll
					// has run since: the nodes' committed states are
					// those encoded).
					s.reset()
					e.exp.emit(&s, clusters, results)
					fams := append(append([]*dto.MetricFamily(nil), s.gathered()...), others...)
					sortFamilies(fams)
					zeroDurations(fams)
					want := promhttpText(t, format, fams)

					var z bytes.Buffer
					if err := WriteEncoded(&z, format, enc, others, comp); err != nil {
						t.Fatal(err)
					}
					got := gunzip(t, z.Bytes())
					if got != want {
						t.Fatalf("step %d: the encoded answer differs from promhttp's:\n%s", step, firstDifference(got, want))
					}
					for _, f := range enc.Families {
						for _, c := range f.Chunks[1:] {
							switch {
							case !c.IsStored():
								compressed++
							case c.Len() >= compressAtOnce:
								t.Fatalf("step %d: a piece of %d bytes of %s was kept stored", step, c.Len(), f.Name)
							}
						}
					}
				})
				if compressed == 0 {
					t.Error("no piece was ever compressed")
				}
			})
		}
	}
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

// promhttpText is what promhttp's handler writes for mfs in format: each
// family through one encoder, then its Close (OpenMetrics' "# EOF").
func promhttpText(t *testing.T, format expfmt.Format, mfs []*dto.MetricFamily) string {
	t.Helper()
	var b bytes.Buffer
	enc := expfmt.NewEncoder(&b, format)
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			t.Fatal(err)
		}
	}
	if c, ok := enc.(expfmt.Closer); ok {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

func gunzip(t *testing.T, z []byte) string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr) // checks the CRC-32 and the length
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
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
