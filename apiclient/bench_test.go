package apiclient

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"testing"

	"github.com/indexima-exporter/indexima_exporter/event"
)

// benchListing builds a realistic listing of n events (a third with a table
// name as comment).
func benchListing(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"reqs":[`)
	date := int64(1574757198519)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		typ := event.KnownTypes[i%len(event.KnownTypes)]
		comment := ""
		if i%3 == 0 {
			comment = "etalon.nyc_yellow_full_" + strconv.Itoa(i%50)
		}
		fmt.Fprintf(&b, `{"type":%q,"date":%d,"duration":%d,"comment":%q}`, typ, date+int64(i)*37, 10+i%400, comment)
	}
	fmt.Fprintf(&b, `],"runnings":[],"last":%d}`, date+int64(n)*37)
	return b.Bytes()
}

type countingHandler struct{ n int }

func (h *countingHandler) Event(event.Event) error   { h.n++; return nil }
func (h *countingHandler) Running(event.Event) error { h.n++; return nil }

// BenchmarkStreamListing decodes and counts a 10,000-event listing; the
// target is at least a million events per second on one core.
func BenchmarkStreamListing(b *testing.B) {
	const events = 10000
	body := benchListing(events)
	rd := bytes.NewReader(body)
	br := bufio.NewReaderSize(rd, decoderBufferSize)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	total := 0
	for b.Loop() {
		rd.Reset(body)
		br.Reset(rd)
		h := &countingHandler{}
		if _, err := decodeListing(br, h); err != nil {
			b.Fatal(err)
		}
		if h.n != events {
			b.Fatalf("counted %d events, want %d", h.n, events)
		}
		total += h.n
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "events/s")
}
