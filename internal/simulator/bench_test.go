package simulator

import (
	"io"
	"net/http"
	"testing"
	"time"
)

// benchLastEvents measures a lastevents answer of n events over HTTP with
// gzip, as the exporter asks for it.
func benchLastEvents(b *testing.B, n int) {
	s, clk := newTestSim(b, Config{})
	tok := login(b, s)
	base := t0.Add(time.Second)
	evs := make([]Event, n)
	for i := range evs {
		evs[i] = Event{Type: TableLoaded, Date: ms(base) + int64(i), Duration: 120, Comment: "sales.orders"}
	}
	s.Append(nodeA, evs...)
	clk.Set(base.Add(time.Hour))
	req, _ := http.NewRequest("GET", s.URL()+"/api/monitor/get/lastevents/"+itoa(ms(base)), nil)
	req.Header.Set("Authorization", tok)
	req.Header.Set("Monitor-Target-Host", "node-a")
	req.Header.Set("Monitor-Target-Port", "9999")
	req.Header.Set("Accept-Encoding", "gzip")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, err := rawClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}

func BenchmarkLastEvents50(b *testing.B)    { benchLastEvents(b, 50) }
func BenchmarkLastEvents10000(b *testing.B) { benchLastEvents(b, 10000) }

// BenchmarkEncodeListing10000 is the encoder alone.
func BenchmarkEncodeListing10000(b *testing.B) {
	evs := make([]Event, 10000)
	for i := range evs {
		evs[i] = Event{Type: HyperIndexLoaded, Date: 1795341600000 + int64(i), Duration: 1234, Comment: "hi_orders_date"}
	}
	buf := make([]byte, 0, 1<<20)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = appendListing(buf[:0], evs, evs[:10], 1795341700000, true, false)
	}
	b.SetBytes(int64(len(buf)))
}
