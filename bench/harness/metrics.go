package harness

import (
	"bytes"
	"fmt"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// exposition is one parsed scrape.
type exposition map[string]*dto.MetricFamily

func parseExposition(body []byte) (exposition, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("parsing the exposition: %w", err)
	}
	return fams, nil
}

// sum adds the values of every series of a counter or gauge family.
func (e exposition) sum(name string) float64 { return e.sumWhere(name, "", "") }

// sumWhere adds up the samples of family name that carry label=value (every
// sample when label is "").
func (e exposition) sumWhere(name, label, value string) float64 {
	return e.sumMatching(name, func(m *dto.Metric) bool { return label == "" || hasLabel(m, label, value) })
}

// sumWhere2 adds up the samples of family name that carry both label pairs.
func (e exposition) sumWhere2(name, l1, v1, l2, v2 string) float64 {
	return e.sumMatching(name, func(m *dto.Metric) bool { return hasLabel(m, l1, v1) && hasLabel(m, l2, v2) })
}

func (e exposition) sumMatching(name string, keep func(*dto.Metric) bool) float64 {
	f := e[name]
	if f == nil {
		return 0
	}
	total := 0.0
	for _, m := range f.Metric {
		if !keep(m) {
			continue
		}
		switch {
		case m.Counter != nil:
			total += m.Counter.GetValue()
		case m.Gauge != nil:
			total += m.Gauge.GetValue()
		case m.Untyped != nil:
			total += m.Untyped.GetValue()
		}
	}
	return total
}

// gcAndAllocs is the exporter's garbage collections and bytes allocated
// so far, as its Go collector reports them (0 without it).
func (e exposition) gcAndAllocs() (collections, allocs float64) {
	if f := e["go_gc_duration_seconds"]; f != nil && len(f.Metric) > 0 && f.Metric[0].Summary != nil {
		collections = float64(f.Metric[0].Summary.GetSampleCount())
	}
	return collections, e.sum("go_memstats_alloc_bytes_total")
}

func hasLabel(m *dto.Metric, label, value string) bool {
	for _, l := range m.Label {
		if l.GetName() == label && l.GetValue() == value {
			return true
		}
	}
	return false
}

// series counts the series of the exposition that carry label=value.
func (e exposition) series(label, value string) int {
	n := 0
	for _, f := range e {
		for _, m := range f.Metric {
			for _, l := range m.Label {
				if l.GetName() == label && l.GetValue() == value {
					if f.GetType() == dto.MetricType_HISTOGRAM {
						n += len(m.Histogram.Bucket) + 2
					} else {
						n++
					}
					break
				}
			}
		}
	}
	return n
}

// lines counts the sample lines of a text exposition.
func sampleLines(body []byte) int {
	n := 0
	for _, l := range bytes.Split(body, []byte("\n")) {
		if len(l) > 0 && l[0] != '#' {
			n++
		}
	}
	return n
}
