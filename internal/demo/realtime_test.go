package demo

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
	"github.com/indexima-exporter/indexima_exporter/event"
	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// demoMinutes is how much of --demo the real-time test plays: as many
// lively incidents as that many minutes hold at the demo's pace.
const demoMinutes = 10

var (
	timestampFamily = regexp.MustCompile(`^indexima_.*_timestamp_seconds$`)
	livelyIncident  = regexp.MustCompile(`msg="lively incident" incident="?([a-z-]+)`)
)

// TestDemoNeverDatesAfterTheRealClock plays ten minutes of the demo's
// incidents, the scripted opening and then the lively scenario, at a tenth
// of their pace: the scenario's waits are shortened (Demo.pace), never its
// clock, which is the one --demo runs on. Scraped over HTTP through the real
// collector again and again, no indexima_*_timestamp_seconds sample is ever
// after the time its scrape was answered; neither is a cursor or a poll of
// the status records /status shows, nor a listing's last or event date
// straight from the demo's console. And the samples are dated in real time,
// not in the past: some are seconds old when scraped.
func TestDemoNeverDatesAfterTheRealClock(t *testing.T) {
	if testing.Short() {
		t.Skip("plays ten minutes of the demo's incidents in about one; skipped with -short")
	}
	var logs testkit.SyncBuffer
	d, err := Start(log.NewLogfmtLogger(&logs))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.pace = 0.1

	reg, polls, client, targets := exporterOf(t, d)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()

	scrapes, samples, fresh := 0, 0, 0
	check := func() {
		t.Helper()
		body, answered := scrape(t, srv.URL)
		scrapes++
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(strings.NewReader(body))
		if err != nil {
			t.Fatalf("scrape %d: %v", scrapes, err)
		}
		for name, fam := range fams {
			if !timestampFamily.MatchString(name) {
				continue
			}
			for _, m := range fam.GetMetric() {
				v := time.UnixMilli(int64(m.GetGauge().GetValue() * 1000))
				samples++
				if v.After(answered) {
					t.Fatalf("scrape %d answered at %s: %s%s is %s, %s after it", scrapes, answered.Format(time.RFC3339Nano),
						name, labels(m.GetLabel()), v.Format(time.RFC3339Nano), v.Sub(answered))
				}
				if answered.Sub(v) < 5*time.Second {
					fresh++
				}
			}
		}
		// What /status shows: each node's cursor and polls.
		for _, cs := range polls.Status() {
			now := time.Now()
			for _, n := range cs.Nodes {
				if n.Cursor.After(now) {
					t.Fatalf("status of %s at %s: cursor %s, %s ahead", n.Name, now.Format(time.RFC3339Nano), n.Cursor.Format(time.RFC3339Nano), n.Cursor.Sub(now))
				}
				for _, p := range n.Polls {
					if p.Start.After(now) {
						t.Fatalf("status of %s at %s: a poll started at %s", n.Name, now.Format(time.RFC3339Nano), p.Start.Format(time.RFC3339Nano))
					}
				}
			}
		}
	}
	check() // first contact, before the scenario starts
	d.Play()

	wantIncidents := int(demoMinutes * time.Minute / every)
	deadline := time.Now().Add(6 * time.Minute)
	var kinds map[string]int
	for {
		check()
		checkListings(t, client, targets)
		kinds = map[string]int{}
		total := 0
		for _, m := range livelyIncident.FindAllStringSubmatch(logs.String(), -1) {
			kinds[m[1]]++
			total++
		}
		if total >= wantIncidents && kinds["node-down"] > 0 && kinds["memory-low"] > 0 && kinds["cluster-stop"] > 0 && kinds["cluster-start"] > 0 && kinds["reload"] > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 6 minutes, %d lively incidents (%v), want %d of every kind", total, kinds, wantIncidents)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("%d scrapes, %d timestamp samples, %d of them less than 5s old; lively incidents %v", scrapes, samples, fresh, kinds)
	if fresh == 0 {
		t.Errorf("no timestamp sample was less than 5s old when scraped: the demo is not dated in real time")
	}
}

// scrape gets /metrics and returns the body and when it was read whole:
// no sample of it can honestly say a later time.
func scrape(t *testing.T, url string) (string, time.Time) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	answered := time.Now()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d %v", resp.StatusCode, err)
	}
	return string(body), answered
}

// checkListings lists each node's last minute straight from the demo's
// console: neither the listing's last nor an event's date is after the
// moment the answer was read.
func checkListings(t *testing.T, client *apiclient.Client, targets []apiclient.Node) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, n := range targets {
		var h newest
		info, err := client.StreamListing(ctx, n, event.Since(time.Now().Add(-time.Minute).UnixMilli()), &h)
		read := time.Now()
		if err != nil {
			t.Fatalf("listing %s: %v", n.Host, err)
		}
		if info.HasLast && time.UnixMilli(info.Last).After(read) {
			t.Fatalf("listing %s read at %s: last %s is after it", n.Host, read.Format(time.RFC3339Nano), time.UnixMilli(info.Last).Format(time.RFC3339Nano))
		}
		if h.date > 0 && time.UnixMilli(h.date).After(read) {
			t.Fatalf("listing %s read at %s: an event dated %s", n.Host, read.Format(time.RFC3339Nano), time.UnixMilli(h.date).Format(time.RFC3339Nano))
		}
	}
}

// newest keeps the latest date of a listing's events, completed or running.
type newest struct {
	mu   sync.Mutex
	date int64
}

func (h *newest) Event(e event.Event) error   { return h.see(e) }
func (h *newest) Running(e event.Event) error { return h.see(e) }
func (h *newest) see(e event.Event) error {
	h.mu.Lock()
	h.date = max(h.date, e.Date)
	h.mu.Unlock()
	return nil
}

func labels(lps []*dto.LabelPair) string {
	var parts []string
	for _, lp := range lps {
		parts = append(parts, fmt.Sprintf("%s=%q", lp.GetName(), lp.GetValue()))
	}
	return "{" + strings.Join(parts, ",") + "}"
}
