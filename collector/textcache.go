package collector

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"math"
	"runtime"
	"slices"
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
// names, in one piece of memory per node: a chunk's lines are overwritten
// in place when its series change and its lines keep their length, so
// that a steady scrape makes no new text. A piece per chunk (a line, most
// often) held twice the text in headers and size classes, and pinned the
// heap's spans (docs/performance.md, memory).
type nodeText struct {
	text    []byte      // the chunks' lines, one after the other
	chunks  []textChunk // where each ends in text
	written int         // of chunks, those written anew at the latest scrape
}

// textChunk is where a node's lines of one series end in its text (a
// gauge's or counter's line, a histogram's lines; of its family, for a
// family whose series were not written a line each), the family and the
// hash of what they encode.
type textChunk struct {
	sum uint64
	end uint32
	fam int32
}

// start is where chunk p begins in the node's text.
func (nt *nodeText) start(p int) uint32 {
	if p == 0 {
		return 0
	}
	return nt.chunks[p-1].end
}

// lines returns the text of chunk p.
func (nt *nodeText) lines(p int) []byte { return nt.text[nt.start(p):nt.chunks[p].end] }

// same tells whether chunk p encodes the series of family fam that hash sum.
func (nt *nodeText) same(p, fam int, sum uint64) bool {
	return p < len(nt.chunks) && int(nt.chunks[p].fam) == fam && nt.chunks[p].sum == sum
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
	// The node's new chunks (place): its index, and its text from the
	// first chunk that does not keep its length and place (tailFrom, -1
	// while every chunk does).
	index    []textChunk
	tail     []byte
	tailFrom int
	seed     maphash.Seed
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
// built and encoded.
func (c *textCache) encodeNode(w *textEncoder, nt *nodeText) {
	w.index, w.tail, w.tailFrom = w.index[:0], w.tail[:0], -1
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
				c.keep(w, nt, fam, recs[i:i+1])
			}
		case len(recs) == 1:
			c.keep(w, nt, fam, recs)
		default:
			c.keepLines(w, nt, fam, recs)
		}
	}
	w.commit(nt)
}

// keep makes the next chunk of nt the lines of recs (series of family
// fam): the chunk already at its place when it encodes series that hash
// the same, else recs built and encoded now.
func (c *textCache) keep(w *textEncoder, nt *nodeText, fam int, recs []seriesRecord) {
	p, sum := len(w.index), w.sum(recs)
	if nt.same(p, fam, sum) {
		w.place(nt, fam, sum, nt.lines(p), false)
		return
	}
	if lines, ok := c.encodeRecords(w, fam, recs); ok {
		w.place(nt, fam, sum, lines, true)
	}
}

// keepLines is keep for a family of gauges or counters, which a format
// writes a line each: a chunk per series, so that a new event, which
// changes the series of its type, writes those lines only. The series
// that changed are encoded together (one header for all) and each line
// goes to its series' chunk.
func (c *textCache) keepLines(w *textEncoder, nt *nodeText, fam int, recs []seriesRecord) {
	k := len(w.index)
	w.sums, w.changed = w.sums[:0], w.changed[:0]
	for i := range recs {
		sum := w.sum(recs[i : i+1])
		w.sums = append(w.sums, sum)
		if !nt.same(k+i, fam, sum) {
			w.changed = append(w.changed, recs[i])
		}
	}
	var lines []byte
	if len(w.changed) > 0 {
		var ok bool
		lines, ok = c.encodeRecords(w, fam, w.changed)
		n := len(w.changed)
		clear(w.changed) // no pointer into the committed state is kept
		if !ok {
			return
		}
		if bytes.Count(lines, newline) != n {
			// Not a line a series (not expected of the text formats): the
			// family is one chunk.
			c.keep(w, nt, fam, recs)
			return
		}
	}
	for i := range recs {
		if p := k + i; nt.same(p, fam, w.sums[i]) {
			w.place(nt, fam, w.sums[i], nt.lines(p), false)
			continue
		}
		n := bytes.IndexByte(lines, '\n') + 1
		w.place(nt, fam, w.sums[i], lines[:n], true)
		lines = lines[n:]
	}
}

var newline = []byte{'\n'}

// place makes lines (of family fam, whose series hash sum; written anew
// when fresh, else the chunk of nt at the same place) the next chunk of
// the node's new text. Until a chunk changes its length, each takes the
// place of the one before in nt's own memory; from there on they go to
// the tail, which commit copies over.
func (w *textEncoder) place(nt *nodeText, fam int, sum uint64, lines []byte, fresh bool) {
	p := len(w.index)
	if fresh {
		nt.written++
	}
	if w.tailFrom < 0 && p < len(nt.chunks) {
		if old := nt.lines(p); len(old) == len(lines) {
			if fresh {
				copy(old, lines)
			}
			w.index = append(w.index, textChunk{sum: sum, end: nt.chunks[p].end, fam: int32(fam)})
			return
		}
	}
	if w.tailFrom < 0 {
		w.tailFrom = 0
		if p > 0 {
			w.tailFrom = int(w.index[p-1].end)
		}
	}
	w.tail = append(w.tail, lines...)
	w.index = append(w.index, textChunk{sum: sum, end: uint32(w.tailFrom + len(w.tail)), fam: int32(fam)})
}

// commit makes nt the node's new chunks (place): the tail copied after the
// text that kept its place. The text gets memory of its size and a 32nd
// more (half a kilobyte for a node of 200 nodes' day), for the digits its
// counters gain, and its index a 16th more, for the series a node gains
// over a day; each up to the end of the allocation's size class (which
// make would leave unused). A node whose text or index shrank by half gets
// memory of its size. Memory made at each small growth was a day's
// garbage of node-sized pieces, and their holes in the heap's spans
// (docs/performance.md, "The binary as released, and families held").
func (w *textEncoder) commit(nt *nodeText) {
	n := 0
	if len(w.index) > 0 {
		n = int(w.index[len(w.index)-1].end)
	}
	if w.tailFrom >= 0 {
		if cap(nt.text) < n || cap(nt.text) > 2*n+64 {
			text := slices.Grow([]byte(nil), n+n/32)[:n]
			copy(text, nt.text[:w.tailFrom])
			nt.text = text
		}
		nt.text = nt.text[:n]
		copy(nt.text[w.tailFrom:], w.tail)
	}
	nt.text = nt.text[:n]
	if k := len(w.index); cap(nt.chunks) < k || cap(nt.chunks) > 2*k+16 {
		nt.chunks = slices.Grow([]textChunk(nil), k+k/16)
	}
	nt.chunks = append(nt.chunks[:0], w.index...)
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
