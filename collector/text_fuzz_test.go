package collector

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/go-kit/log"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/indexima-exporter/indexima_exporter/tally"
)

// FuzzTextIsWhatPromhttpWrites gives the text exposition series the fuzzer
// chooses, scrape after scrape (which families, how many series, their
// label values, values, histograms and created timestamps, and the
// scraper's Accept header), and checks each answer byte for byte against
// what promhttp writes for the same series built as families: lines kept
// from the scrape before, lines written anew, series that come and go.
func FuzzTextIsWhatPromhttpWrites(f *testing.F) {
	f.Add([]byte("\x00\x02\x01a\x05\x00\x00\x00\x00\x00\x00\xf0\x3f\x02\x01b\x03\x01\x02\x03\x01"), false)
	f.Add([]byte("\x03\x04\x02\x02x\"\n\x07\x01\x02\x03\x04\x05\x06\x07\x08\x01\x01\x00\x02\x02y\\\x00\x01\x01"), true)
	f.Add(bytes.Repeat([]byte{1, 2, 3, 'q', 0xff, 0xfe, 7}, 40), true)
	accepts := []string{textAccepts["none"], textAccepts["prometheus-2"], textAccepts["prometheus-3"], textAccepts["text-1.0.0"]}
	f.Fuzz(func(t *testing.T, data []byte, named bool) {
		in := fuzzInput{data: data}
		d := newDescs(named)
		families := []*seriesDesc{d.up, d.pollDuration, d.eventsTotal, d.eventsRunning, d.eventLast, d.eventDuration, d.table}
		labels := [][]string{{"a"}, {"b"}}
		names := []string{"node"}
		if named {
			labels, names = [][]string{{"east", "a"}, {"west", "b"}}, []string{"cluster", "node"}
		}
		cs := &clusterSeries{d: d}
		for _, l := range labels {
			cs.nodes = append(cs.nodes, nodeSeries{labels: l, pairs: labelPairs(names, l)})
		}
		clusters := []*clusterSeries{cs}
		var c textCache
		for scrape := 0; scrape < 4 && in.more(); scrape++ {
			accept := accepts[int(in.byte())%len(accepts)]
			c.prepare(log.NewNopLogger(), negotiate(accept), clusters)
			w := <-c.encoders
			var want familySink
			for i, ns := range cs.nodes {
				for range int(in.byte() % 12) {
					emitFuzzSeries(&in, families[int(in.byte())%len(families)], ns, &w.records, &want)
				}
				c.encodeNode(w, &c.nodes[i])
				w.records.reset()
			}
			c.encoders <- w
			wantText, _ := promhttpAnswer(t, accept, want.gathered())
			var got bytes.Buffer
			if err := (&TextScrape{c: &c}).WriteTo(&got, nil); err != nil {
				t.Fatal(err)
			}
			if got.String() != wantText {
				t.Fatalf("scrape %d, Accept %q: the text answer differs from promhttp's:\n%s", scrape, accept, firstDifference(got.String(), wantText))
			}
		}
	})
}

// emitFuzzSeries sends one series of d, of values read from in, to both
// sinks.
func emitFuzzSeries(in *fuzzInput, d *seriesDesc, ns nodeSeries, records *recordSink, want *familySink) {
	extra := ""
	if d.extra != "" {
		extra = in.string()
	}
	var created *timestamppb.Timestamp
	if in.byte()%2 == 1 {
		created = timestamppb.New(time.UnixMilli(int64(in.uint32())))
	}
	switch d.name {
	case namespace + "_events_total":
		v := in.float()
		records.counter(d, ns.pairs, extra, v, created)
		want.counter(d, ns.pairs, extra, v, created)
	case namespace + "_event_duration_seconds":
		h := &tally.Histogram{Count: uint64(in.uint32()), Sum: in.float()}
		for range int(in.byte()) % (len(tally.DurationBuckets) + 1) {
			h.Buckets = append(h.Buckets, uint64(in.byte()))
		}
		records.histogram(d, ns.pairs, extra, h, created)
		want.histogram(d, ns.pairs, extra, h, created)
	default:
		v := in.float()
		records.gauge(d, ns.pairs, extra, v)
		want.gauge(d, ns.pairs, extra, v)
	}
}

// fuzzInput reads the fuzzer's bytes; past their end, zeros.
type fuzzInput struct {
	data []byte
	at   int
}

func (in *fuzzInput) more() bool { return in.at < len(in.data) }

func (in *fuzzInput) byte() byte {
	if in.at >= len(in.data) {
		return 0
	}
	in.at++
	return in.data[in.at-1]
}

func (in *fuzzInput) uint32() uint32 {
	var b [4]byte
	for i := range b {
		b[i] = in.byte()
	}
	return binary.LittleEndian.Uint32(b[:])
}

// float is a small integer most of the time (values that repeat from one
// scrape to the next), else any float64, NaN and infinities included.
func (in *fuzzInput) float() float64 {
	if k := in.byte(); k < 200 {
		return float64(k % 5)
	}
	var b [8]byte
	for i := range b {
		b[i] = in.byte()
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b[:]))
}

// string is a label value: short, often repeated, any bytes.
func (in *fuzzInput) string() string {
	n := int(in.byte() % 6)
	b := make([]byte, n)
	for i := range b {
		b[i] = in.byte()
	}
	return string(b)
}
