package faults

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// maxLabelBytes is the documented bound on label values taken from the
// cluster's data (docs/counting.md).
const maxLabelBytes = 128

// Comments that are table, index or node names in the spec, but hold
// anything: quotes, backslashes, newlines, a very long text, invalid UTF-8,
// binary bytes, an exposition line. The exposition stays valid (expfmt
// parses it, promtool accepts it), label values are valid UTF-8 and
// bounded, and the events are counted like any other.
func TestOddCommentsKeepExpositionValid(t *testing.T) {
	r := newRig(t, rigOpts{nodes: 2, sim: simulator.Config{Seed: 20}, front: rawBytes})
	n := r.nodes[0]
	r.scrape()
	odd := []string{
		`sales."orders"`,
		`back\slash\\`,
		"multi\nline\r\nname",
		strings.Repeat("long_table_name_", 400),
		"bad\xff\xfeutf8\xc3",
		"nul\x00byte\x01\x02\x7f",
		"# HELP indexima_up fake\nindexima_up 42",
		`"} 1` + "\n" + `indexima_up{node="x"} 7`,
		"",
		"   ",
		"日本語のテーブル",
		"emoji 🚀 table",
		"\xed\xa0\x80surrogate",
		"raw @RAW@ bytes", // the front puts invalid UTF-8 on the wire as is
		"escaped @ESC@ surrogate",
	}
	types := []string{simulator.TableLoaded, simulator.HyperIndexLoaded, simulator.HyperIndexUnloaded,
		simulator.NodeDown, simulator.SaveMetadata, simulator.PreloadFinished, "SOMETHING_NEW\n\"x\"", "\xff\xfe"}
	var evs []simulator.Event
	for _, typ := range types {
		for _, c := range odd {
			evs = append(evs, simulator.Event{Type: typ, Comment: c, Duration: 12})
		}
	}
	r.advance(5 * time.Second)
	r.sim.Append(n, evs...)
	r.advance(5 * time.Second)
	text := r.exp.metricsText()
	s := r.observe(parseMetrics(t, text))
	for name, mf := range s {
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				v := lp.GetValue()
				if !utf8.ValidString(v) {
					t.Errorf("%s{%s}: label value not valid UTF-8: %q", name, lp.GetName(), v)
				}
				if len(v) > maxLabelBytes {
					t.Errorf("%s{%s}: label value of %d bytes, over %d", name, lp.GetName(), len(v), maxLabelBytes)
				}
			}
		}
	}
	if up, _ := s.value("indexima_up", node(n)); up != 1 {
		t.Fatalf("node down after odd events")
	}
	rawSeen := false
	for table := range s.byLabel("indexima_table_loaded", node(n), "table") {
		rawSeen = rawSeen || (strings.HasPrefix(table, "raw ") && !strings.Contains(table, "@RAW@"))
	}
	if !rawSeen {
		t.Errorf("the table named with raw invalid bytes is not exported: the front did not work")
	}
	total := 0.0
	for _, v := range s.byLabel("indexima_events_total", node(n), "event") {
		total += v
	}
	if int(total) != len(evs) {
		t.Errorf("%v events counted, want %d", total, len(evs))
	}
	testkit.PromtoolCheckMetrics(t, text)
	r.run(2, 30*time.Second)
	r.settle()
}

// rawBytes is a front for the console that puts what the simulator's
// encoder never sends on the wire: raw invalid UTF-8 bytes and a JSON
// escape of a lone surrogate in place of markers. It asks the simulator for
// uncompressed answers (the exporter must cope with those too) so that it
// can edit them.
func rawBytes(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del("Accept-Encoding")
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		body := bytes.ReplaceAll(rec.Body.Bytes(), []byte("@RAW@"), []byte("\xff\xfe\xc3("))
		body = bytes.ReplaceAll(body, []byte("@ESC@"), []byte(`\ud800\udfff\u0000`))
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		w.Write(body)
	})
}
