package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// acceptEncodingSeeds are Accept-Encoding headers of scrapers and
// browsers, and odd ones.
var acceptEncodingSeeds = [][]string{
	nil,
	{"gzip"},     // Prometheus
	{"GZIP"},     // not gzip for promhttp: its match is case-sensitive
	{"identity"}, // a client that wants it plain
	{"br, gzip;q=0.5"},
	{"gzip;q=0"},
	{"gzip; q=0.0, identity"},
	{"*"},
	{"*;q=0"},
	{"deflate", "gzip"},
	{"gzip, deflate, br, zstd"}, // curl --compressed, browsers
	{"x-gzip-ish"},
	{"identity;q=1, gzip;q=0.5"},
	{"gzip;q=1.5"},
	{"gzip;level=1"},
}

func TestAcceptsGzip(t *testing.T) {
	for _, tc := range []struct {
		header []string
		want   bool
	}{
		{nil, false},
		{[]string{"gzip"}, true},
		{[]string{"identity"}, false},
		{[]string{"br, gzip;q=0.5"}, true},
		{[]string{"gzip;q=0"}, false},
		{[]string{"*"}, true},
		{[]string{"identity;q=1, gzip;q=0.5"}, false},
	} {
		if got := acceptsGzip(http.Header{"Accept-Encoding": tc.header}); got != tc.want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", tc.header, got, tc.want)
		}
	}
}

// acceptsGzip decides as promhttp's own negotiation does, offering gzip
// then identity, on any Accept-Encoding header (seeds, then the fuzzer's:
// make fuzz).
func FuzzAcceptsGzipAsPromhttp(f *testing.F) {
	for _, h := range acceptEncodingSeeds {
		f.Add(strings.Join(h, "\x00"))
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "test_gauge", Help: "A gauge."}))
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{OfferedCompressions: []promhttp.Compression{promhttp.Gzip, promhttp.Identity}})
	f.Fuzz(func(t *testing.T, values string) {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		for _, v := range strings.Split(values, "\x00") {
			req.Header.Add("Accept-Encoding", v)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		want := rec.Header().Get("Content-Encoding") == "gzip"
		if got := acceptsGzip(req.Header); got != want {
			t.Fatalf("Accept-Encoding %q: acceptsGzip %v, promhttp compresses %v", req.Header.Values("Accept-Encoding"), got, want)
		}
	})
}

// get asks srv for path with the given Accept-Encoding, without Go's
// transparent decompression, and returns the answer with its body read.
func get(t *testing.T, url, acceptEncoding string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	return testkit.Do(t, req)
}

func TestFastGzipServesMetricsCompressedOnlyToWhoAsks(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "test_things_total", Help: "Things."}, []string{"thing"})
	reg.MustRegister(c)
	for i := range 500 { // big enough to span several gzip blocks and writes
		c.WithLabelValues(strings.Repeat("x", i%40) + string(rune('a'+i%26)) + strings.Repeat("y", i/26)).Add(float64(i))
	}
	srv := httptest.NewServer(fastGzip(promhttp.HandlerFor(reg, promhttp.HandlerOpts{DisableCompression: true})))
	defer srv.Close()

	plainResp, plain := get(t, srv.URL, "")
	if enc := plainResp.Header.Get("Content-Encoding"); enc != "" {
		t.Fatalf("no Accept-Encoding: Content-Encoding %q, want none", enc)
	}
	if !strings.Contains(string(plain), `test_things_total{thing="a"} 0`) {
		t.Fatalf("plain answer is not the exposition:\n%.300s", plain)
	}

	for _, ae := range []string{"gzip", "deflate, gzip;q=0.8"} {
		resp, b := get(t, srv.URL, ae)
		if enc := resp.Header.Get("Content-Encoding"); enc != "gzip" {
			t.Fatalf("Accept-Encoding %q: Content-Encoding %q, want gzip", ae, enc)
		}
		if got := testkit.Gunzip(t, b); got != string(plain) {
			t.Fatalf("Accept-Encoding %q: the decompressed answer differs from the plain one (%d vs %d bytes)", ae, len(got), len(plain))
		}
		if len(b) >= len(plain)/3 {
			t.Errorf("Accept-Encoding %q: %d bytes compressed for %d plain; expected far fewer", ae, len(b), len(plain))
		}
		if !strings.Contains(strings.Join(resp.Header.Values("Vary"), ","), "Accept-Encoding") {
			t.Errorf("Accept-Encoding %q: Vary %q lacks Accept-Encoding (caches would mix the encodings)", ae, resp.Header.Values("Vary"))
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
			t.Errorf("Accept-Encoding %q: Content-Type %q, want the exposition's text/plain", ae, ct)
		}
	}

	resp, _ := get(t, srv.URL, "gzip;q=0")
	if enc := resp.Header.Get("Content-Encoding"); enc != "" {
		t.Errorf("gzip;q=0: Content-Encoding %q, want none", enc)
	}
}

func TestFastGzipLeavesErrorAnswersReadable(t *testing.T) {
	srv := httptest.NewServer(fastGzip(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "Unknown target: probe only nodes of the configuration.", http.StatusBadRequest)
	})))
	defer srv.Close()
	resp, b := get(t, srv.URL, "gzip")
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Encoding") != "" {
		t.Fatalf("status %d, Content-Encoding %q; want 400 uncompressed", resp.StatusCode, resp.Header.Get("Content-Encoding"))
	}
	if !strings.Contains(string(b), "Unknown target") {
		t.Fatalf("error body %q is not the handler's message", b)
	}
}

func TestFastGzipEmptyAnswerStaysPlain(t *testing.T) {
	srv := httptest.NewServer(fastGzip(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	defer srv.Close()
	resp, b := get(t, srv.URL, "gzip")
	// A handler that writes nothing never reaches the wrapper's WriteHeader:
	// the answer must be plain and empty, not a gzip header with no stream.
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "" || len(b) != 0 {
		t.Fatalf("status %d, Content-Encoding %q, %d body bytes; want 200, none, 0",
			resp.StatusCode, resp.Header.Get("Content-Encoding"), len(b))
	}
}
