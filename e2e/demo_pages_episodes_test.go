package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// demoEvalInterval is how often the measurement's Prometheus evaluates the
// rules, hence writes ALERTS.
const demoEvalInterval = 15 * time.Second

// episodeGap is the gap between two ALERTS samples of one alert that ends
// a firing episode: more than a couple of missed evaluations, and less than
// any rule's `for` (1m at least), which an alert that resolved goes through
// again before it fires anew.
const episodeGap = 3 * demoEvalInterval

// episode is a span during which an alert was firing in Prometheus.
type episode struct{ from, to time.Time }

// firingEpisodes reads the ALERTS series of firing alerts since start and
// returns, per alert name and alert (alertKey), its firing episodes in
// order: an alert resolved by the demo's real clock and raised again by a
// later incident is one alert with two episodes.
func firingEpisodes(t *testing.T, prom *prometheusServer, start time.Time) map[string]map[string][]episode {
	t.Helper()
	out := map[string]map[string][]episode{}
	for _, series := range rangeSince(t, prom, `ALERTS{alertstate="firing"}`, start) {
		name, key := series.Metric["alertname"], alertKey(series.Metric)
		if out[name] == nil {
			out[name] = map[string][]episode{}
		}
		var eps []episode
		for _, p := range series.Points {
			if n := len(eps); n > 0 && p.At.Sub(eps[n-1].to) <= episodeGap {
				eps[n-1].to = p.At
				continue
			}
			eps = append(eps, episode{from: p.At, to: p.At})
		}
		out[name][key] = append(out[name][key], eps...)
	}
	return out
}

// point is one sample of a range vector.
type point struct {
	At    time.Time
	Value float64
}

// rangeSeries is one series of a range vector.
type rangeSeries struct {
	Metric map[string]string
	Points []point
}

// rangeSince returns the raw samples of the selector expr since start.
func rangeSince(t *testing.T, prom *prometheusServer, expr string, start time.Time) []rangeSeries {
	t.Helper()
	q := fmt.Sprintf("%s[%ds]", expr, int(time.Since(start)/time.Second)+1)
	var data struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Values [][2]any          `json:"values"`
		} `json:"result"`
	}
	if err := prom.apiGet("/api/v1/query", url.Values{"query": {q}}, &data); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if data.ResultType != "matrix" {
		t.Fatalf("%s: result type %q, want matrix", q, data.ResultType)
	}
	out := make([]rangeSeries, 0, len(data.Result))
	for _, r := range data.Result {
		s := rangeSeries{Metric: r.Metric}
		for _, v := range r.Values {
			at, err := sampleTime(v[0])
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			str, _ := v[1].(string)
			f, err := strconv.ParseFloat(str, 64)
			if err != nil {
				t.Fatalf("%s: sample value %v: %v", q, v[1], err)
			}
			s.Points = append(s.Points, point{At: at, Value: f})
		}
		out = append(out, s)
	}
	return out
}

// sampleTime is the time of a sample as the API gives it (seconds, a JSON
// number).
func sampleTime(v any) (time.Time, error) {
	var secs float64
	switch x := v.(type) {
	case float64:
		secs = x
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return time.Time{}, err
		}
		secs = f
	case string:
		f, err := strconv.ParseFloat(x, 64)
		if err != nil {
			return time.Time{}, err
		}
		secs = f
	default:
		return time.Time{}, fmt.Errorf("sample time %v (%T)", v, v)
	}
	return time.UnixMilli(int64(secs * 1000)), nil
}

// describeEpisodes lists every alert's firing episodes with their offsets
// from start (first and last evaluation that saw it firing).
func describeEpisodes(all map[string]map[string][]episode, start time.Time) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(all)) {
		for _, key := range slices.Sorted(maps.Keys(all[name])) {
			var spans []string
			for _, e := range all[name][key] {
				spans = append(spans, fmt.Sprintf("%s-%s", e.from.Sub(start).Round(time.Second), e.to.Sub(start).Round(time.Second)))
			}
			fmt.Fprintf(&b, "  %s%s: %d: %s\n", name, key, len(spans), strings.Join(spans, ", "))
		}
	}
	return b.String()
}
