package collector

import (
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/indexima-exporter/indexima_exporter/tally"
)

// recordSink keeps a node's series as they are emitted, by family, without
// building them: the text exposition (text.go) hashes them, and builds and
// encodes only those whose lines changed since the scrape before, so that
// an unchanged series costs neither its client_model values nor its label
// pairs. It is one node's at a time; reset empties it, keeping its memory.
type recordSink struct {
	node []*dto.LabelPair // the node's label pairs, the same for each series
	fams [][]seriesRecord // by family index
}

// seriesRecord is one series of a node as emitted: its descriptor, the
// value of its extra label, and its value (a gauge's or counter's, or a
// histogram), with the counters' created timestamp.
type seriesRecord struct {
	d       *seriesDesc
	kind    dto.MetricType
	extra   string
	value   float64
	hist    *tally.Histogram // the committed state's, read-only
	created *timestamppb.Timestamp
}

func (s *recordSink) add(r seriesRecord, node []*dto.LabelPair) {
	s.node = node
	fam := r.d.fam
	if fam >= len(s.fams) {
		s.fams = append(s.fams, make([][]seriesRecord, fam+1-len(s.fams))...)
	}
	s.fams[fam] = append(s.fams[fam], r)
}

func (s *recordSink) gauge(d *seriesDesc, node []*dto.LabelPair, extra string, value float64) {
	s.add(seriesRecord{d: d, kind: dto.MetricType_GAUGE, extra: extra, value: value}, node)
}

func (s *recordSink) counter(d *seriesDesc, node []*dto.LabelPair, extra string, value float64, created *timestamppb.Timestamp) {
	s.add(seriesRecord{d: d, kind: dto.MetricType_COUNTER, extra: extra, value: value, created: created}, node)
}

func (s *recordSink) histogram(d *seriesDesc, node []*dto.LabelPair, extra string, h *tally.Histogram, created *timestamppb.Timestamp) {
	s.add(seriesRecord{d: d, kind: dto.MetricType_HISTOGRAM, extra: extra, hist: h, created: created}, node)
}

// reset empties the sink, keeping its memory.
func (s *recordSink) reset() {
	for i := range s.fams {
		clear(s.fams[i]) // no pointer into the committed state is kept
		s.fams[i] = s.fams[i][:0]
	}
	s.node = nil
}

// build writes records into out as the families of the series they are
// (familySink's methods), for the encoder.
func (s *recordSink) build(out *familySink, records []seriesRecord) {
	for _, r := range records {
		switch r.kind {
		case dto.MetricType_GAUGE:
			out.gauge(r.d, s.node, r.extra, r.value)
		case dto.MetricType_COUNTER:
			out.counter(r.d, s.node, r.extra, r.value, r.created)
		case dto.MetricType_HISTOGRAM:
			out.histogram(r.d, s.node, r.extra, r.hist, r.created)
		}
	}
}
