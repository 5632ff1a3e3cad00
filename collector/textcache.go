package collector

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"math"
	"runtime"
	"sync"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// textCache is what the latest scrape wrote, in one format, for one
// configuration: a scrape in another format or after a reload writes
// every line anew.
type textCache struct {
	mu     sync.Mutex // held from ScrapeText to TextScrape.Close
	format expfmt.Format
	series []*clusterSeries // the configuration (seriesOf's slice)
	nodes  []nodeText       // in the configuration's order
	order  []int            // family indexes in the order of their names
	scrape familySink       // the scrape's own gauges
	logger log.Logger

	headersMu sync.Mutex           // nodes are encoded concurrently
	headers   map[int]familyHeader // by family index

	// encoders are the scratch of the nodes being encoded: one per
	// processor, since encoding is all CPU, up to maxEncoders.
	encoders chan *textEncoder
	seed     maphash.Seed

	cursors []int         // WriteTo's, by node
	out     *bufio.Writer // WriteTo's, kept with the lines
}

// maxEncoders bounds the encoders on a machine of many cores: each holds
// a node's families and text (the polls run beside them).
const maxEncoders = 4

// familyHeader is a family's name and header lines (HELP, TYPE) in the
// cache's format.
type familyHeader struct {
	name  string
	lines []byte
}

// nodeText is a node's lines, family after family in the order of their
// names; a chunk's text is overwritten in place when its series change,
// so that a steady scrape makes no new text.
type nodeText struct {
	chunks  []textChunk
	written int // of chunks, those written anew at the latest scrape
}

// textChunk is a node's lines of one series (a gauge's or counter's line,
// a histogram's lines; of its family, for a family whose series were not
// written a line each) and the hash of what they encode.
type textChunk struct {
	fam  int
	sum  uint64
	text []byte
}

// textEncoder is the scratch of one node's encoding.
type textEncoder struct {
	records recordSink // the node's series, emptied after each node
	node    familySink // the series of a chunk written anew, built
	keys    []string   // sortedKeys' scratch
	text    bytes.Buffer
	key     []byte         // sum's scratch
	sums    []uint64       // keepLines' scratch
	changed []seriesRecord // keepLines' scratch
	seed    maphash.Seed
	// enc writes into text in encFormat (an encoder keeps no state
	// between families but its writer's; making one parses the format).
	enc       expfmt.Encoder
	encFormat expfmt.Format
}

// prepare sets the cache for a scrape of clusters in format: emptied when
// the format or the configuration changed. c.mu is held.
func (c *textCache) prepare(logger log.Logger, format expfmt.Format, clusters []*clusterSeries) {
	c.logger = logger
	if c.encoders == nil {
		c.seed = maphash.MakeSeed()
		n := min(runtime.GOMAXPROCS(0), maxEncoders)
		c.encoders = make(chan *textEncoder, n)
		for range n {
			c.encoders <- &textEncoder{seed: c.seed}
		}
	}
	// seriesOf makes a new slice for each configuration.
	sameSeries := len(c.series) == len(clusters) && (len(clusters) == 0 || &c.series[0] == &clusters[0])
	if format != c.format || !sameSeries {
		n := 0
		for _, cs := range clusters {
			n += len(cs.nodes)
		}
		c.format, c.series = format, clusters
		c.nodes = make([]nodeText, n)
		c.headers = map[int]familyHeader{}
	}
	c.order = familiesByName(c.order)
}

// encodeNode writes the node's series (w.records) into nt: each chunk kept
// when the series at its place hash the same as the scrape before, else
// built and encoded into the chunk's own memory.
func (c *textCache) encodeNode(w *textEncoder, nt *nodeText) {
	k := 0
	nt.written = 0
	for _, fam := range c.order {
		if fam >= len(w.records.fams) {
			continue
		}
		recs := w.records.fams[fam]
		switch {
		case len(recs) == 0:
		case recs[0].kind == dto.MetricType_HISTOGRAM:
			for i := range recs {
				k = c.keep(w, nt, k, fam, recs[i:i+1])
			}
		case len(recs) == 1:
			k = c.keep(w, nt, k, fam, recs)
		default:
			k = c.keepLines(w, nt, k, fam, recs)
		}
	}
	clear(nt.chunks[k:]) // the text of places no longer used
	nt.chunks = nt.chunks[:k]
}

// keep makes chunk k of nt the lines of recs (series of family fam) and
// returns the next chunk's place: the chunk already there when it encodes
// series that hash the same, else recs built and encoded now.
func (c *textCache) keep(w *textEncoder, nt *nodeText, k, fam int, recs []seriesRecord) int {
	sum := w.sum(recs)
	if k < len(nt.chunks) && nt.chunks[k].fam == fam && nt.chunks[k].sum == sum {
		return k + 1
	}
	lines, ok := c.encodeRecords(w, fam, recs)
	if !ok {
		return k
	}
	nt.put(k, fam, sum, lines)
	return k + 1
}

// keepLines is keep for a family of gauges or counters, which a format
// writes a line each: a chunk per series, so that a new event, which
// changes the series of its type, writes those lines only. The series
// that changed are encoded together (one header for all) and each line
// goes to its series' chunk.
func (c *textCache) keepLines(w *textEncoder, nt *nodeText, k, fam int, recs []seriesRecord) int {
	w.sums, w.changed = w.sums[:0], w.changed[:0]
	for i := range recs {
		sum := w.sum(recs[i : i+1])
		w.sums = append(w.sums, sum)
		if p := k + i; p >= len(nt.chunks) || nt.chunks[p].fam != fam || nt.chunks[p].sum != sum {
			w.changed = append(w.changed, recs[i])
		}
	}
	if len(w.changed) == 0 {
		return k + len(recs)
	}
	lines, ok := c.encodeRecords(w, fam, w.changed)
	clear(w.changed) // no pointer into the committed state is kept
	if !ok {
		return k
	}
	if bytes.Count(lines, newline) != len(w.changed) {
		// Not a line a series (not expected of the text formats): the
		// family is one chunk.
		return c.keep(w, nt, k, fam, recs)
	}
	for i := range recs {
		p := k + i
		if p < len(nt.chunks) && nt.chunks[p].fam == fam && nt.chunks[p].sum == w.sums[i] {
			continue
		}
		n := bytes.IndexByte(lines, '\n') + 1
		nt.put(p, fam, w.sums[i], lines[:n])
		lines = lines[n:]
	}
	return k + len(recs)
}

var newline = []byte{'\n'}

// put makes chunk p of nt, p at most its length (a new chunk at the end,
// whose memory may be one dropped before), the lines of family fam whose
// series hash sum.
func (nt *nodeText) put(p, fam int, sum uint64, lines []byte) {
	if p == len(nt.chunks) {
		if p < cap(nt.chunks) {
			nt.chunks = nt.chunks[:p+1]
		} else {
			nt.chunks = append(nt.chunks, textChunk{})
		}
	}
	nt.chunks[p].set(fam, sum, lines)
	nt.written++
}

// set makes ch the lines of family fam whose series hash sum, in its own
// memory.
func (ch *textChunk) set(fam int, sum uint64, lines []byte) {
	if n := len(lines); cap(ch.text) < n || cap(ch.text) > 2*n+64 {
		// An eighth more than the lines, for the digits a counter gains;
		// a place that held a larger chunk gets memory of its size. Grown
		// by append and kept however large, the chunks of a day held 1.6
		// times their text.
		ch.text = make([]byte, 0, n+n/8)
	}
	ch.fam, ch.sum, ch.text = fam, sum, append(ch.text[:0], lines...)
}

// encodeRecords builds recs (series of family fam) and returns their lines
// (encode).
func (c *textCache) encodeRecords(w *textEncoder, fam int, recs []seriesRecord) ([]byte, bool) {
	w.records.build(&w.node, recs)
	lines, ok := c.encode(w, fam, w.node.fams[fam])
	w.node.reset()
	return lines, ok
}

// newLineEncoder is expfmt.NewEncoder(w, format), without the copy of each
// family that model.EscapeMetricFamily makes first for the Prometheus text
// format: the exporter's metric and label names are valid legacy names,
// which every escaping scheme leaves as they are, so the copy changes
// nothing (TestTextIsWhatPromhttpWrites, over each scheme Prometheus asks
// for), and it was a twentieth of what the text exposition allocated.
func newLineEncoder(w *bytes.Buffer, format expfmt.Format) expfmt.Encoder {
	if format.FormatType() != expfmt.TypeTextPlain {
		return expfmt.NewEncoder(w, format)
	}
	return textPlainEncoder{w}
}

type textPlainEncoder struct{ w *bytes.Buffer }

func (e textPlainEncoder) Encode(mf *dto.MetricFamily) error {
	_, err := expfmt.MetricFamilyToText(e.w, mf)
	return err
}

// encode returns the lines of mf in the cache's format (in w's scratch,
// valid until the next encoding), and keeps the family's header lines at
// its first encoding.
func (c *textCache) encode(w *textEncoder, fam int, mf *dto.MetricFamily) ([]byte, bool) {
	w.text.Reset()
	if w.enc == nil || w.encFormat != c.format {
		w.enc, w.encFormat = newLineEncoder(&w.text, c.format), c.format
	}
	if err := w.enc.Encode(mf); err != nil {
		// Not expected: the series are valid by construction (series.go).
		level.Error(c.logger).Log("msg", "cannot encode a family", "family", mf.GetName(), "err", err)
		return nil, false
	}
	b := w.text.Bytes()
	end := 0 // of the header lines: those that start with '#'
	for end < len(b) && b[end] == '#' {
		i := bytes.IndexByte(b[end:], '\n')
		if i < 0 {
			end = len(b)
			break
		}
		end += i + 1
	}
	c.headersMu.Lock()
	if _, ok := c.headers[fam]; !ok {
		c.headers[fam] = familyHeader{name: mf.GetName(), lines: bytes.Clone(b[:end])}
	}
	c.headersMu.Unlock()
	return b[end:], true
}

// sum hashes what recs encode: for each series, its kind, the value of
// its extra label, its value or histogram, and its created timestamp. The
// rest of a line is the same at every scrape of one configuration (the
// family's name, help and type, the node's labels, the extra label's
// name), and the cache is emptied when the configuration changes. A
// 64-bit hash of a seed drawn at start: two different series hashing the
// same at one place of one node is a chance of 2^-64 per changed chunk.
func (w *textEncoder) sum(recs []seriesRecord) uint64 {
	// Appended, then hashed at once: a write to maphash.Hash for each
	// field was a quarter of what the text exposition cost.
	b := w.key[:0]
	for i := range recs {
		r := &recs[i]
		b = append(b, byte(r.kind))
		b = binary.AppendUvarint(b, uint64(len(r.extra))) // so that no two lists append the same bytes
		b = append(b, r.extra...)
		b = binary.LittleEndian.AppendUint64(b, uint64(r.created.GetSeconds()))
		b = binary.LittleEndian.AppendUint32(b, uint32(r.created.GetNanos()))
		if r.hist == nil {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(r.value))
			continue
		}
		b = binary.LittleEndian.AppendUint64(b, r.hist.Count)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(r.hist.Sum))
		b = binary.LittleEndian.AppendUint64(b, uint64(len(r.hist.Buckets)))
		for _, n := range r.hist.Buckets {
			b = binary.LittleEndian.AppendUint64(b, n)
		}
	}
	w.key = b
	return maphash.Bytes(w.seed, b)
}
