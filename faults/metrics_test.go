package faults

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape is one parsed /metrics answer.
type scrape map[string]*dto.MetricFamily

// parseMetrics parses the text exposition strictly (legacy metric names),
// failing the test on any syntax error: a broken exposition is a bug.
func parseMetrics(t *testing.T, text string) scrape {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("exposition does not parse: %v", err)
	}
	return scrape(mfs)
}

// keepFamilies returns the lines of a text exposition that belong to the
// named families (their HELP, TYPE and sample lines; counters and gauges,
// whose samples carry the family's name).
func keepFamilies(text string, names map[string]bool) string {
	var b strings.Builder
	for line := range strings.Lines(text) {
		name := line
		if rest, ok := strings.CutPrefix(line, "# "); ok {
			f := strings.Fields(rest)
			if len(f) < 2 {
				continue
			}
			name = f[1]
		} else if i := strings.IndexAny(line, "{ "); i >= 0 {
			name = line[:i]
		}
		if names[name] {
			b.WriteString(line)
		}
	}
	return b.String()
}

func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, lp := range m.GetLabel() {
		out[lp.GetName()] = lp.GetValue()
	}
	return out
}

func matches(m *dto.Metric, want map[string]string) bool {
	l := labelsOf(m)
	for k, v := range want {
		if l[k] != v {
			return false
		}
	}
	return true
}

func metricValue(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return 0
}

// value returns the value of the one series of name matching labels.
func (s scrape) value(name string, labels map[string]string) (float64, bool) {
	mf := s[name]
	if mf == nil {
		return 0, false
	}
	for _, m := range mf.GetMetric() {
		if matches(m, labels) {
			return metricValue(m), true
		}
	}
	return 0, false
}

// byLabel returns the values of name matching labels, keyed by label key.
func (s scrape) byLabel(name string, labels map[string]string, key string) map[string]float64 {
	out := map[string]float64{}
	mf := s[name]
	if mf == nil {
		return out
	}
	for _, m := range mf.GetMetric() {
		if matches(m, labels) {
			out[labelsOf(m)[key]] += metricValue(m)
		}
	}
	return out
}

func node(n string) map[string]string { return map[string]string{"node": n} }

func fmtCounts(m map[string]float64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%g ", k, m[k])
	}
	return strings.TrimSpace(b.String())
}
