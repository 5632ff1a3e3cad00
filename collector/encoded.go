package collector

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/indexima-exporter/indexima_exporter/internal/gzchunk"
	"github.com/indexima-exporter/indexima_exporter/poller"
)

// The encoded exposition of /metrics, for the text formats asked with gzip
// (what Prometheus asks). In a steady state most series of a node are the
// same from one scrape to the next: a node with a new event changes its
// counter, latest time and histogram of that type, its cursor and reported
// count; its tables, indexes, cluster state and the histograms of other
// types stay. So each node's series are encoded family by family, by
// client_golang's own encoder (expfmt), as soon as the node's series are
// emitted, and each family's lines (each series', for a histogram) are
// kept as a piece of a gzip stream (package gzchunk) with a hash of what
// they encode: at the next scrape, lines whose series hash the same reuse
// their bytes, neither encoded nor compressed again. Pieces of 1 KiB or
// more are compressed when encoded, smaller ones once they have stayed the
// same three scrapes: kept as text, the lines of 2,000 nodes (19 MB) took
// the resident memory over the budget (docs/performance.md, "Large
// fleets"), and compressing a line or two at every scrape costs more than
// sending it.
//
// What the answer holds is what promhttp writes for the families of
// ScrapeGatherer: the same families in the same order, the same lines
// (TestEncodedIsWhatPromhttpWrites). The protobuf formats, an answer
// without gzip, /probe and Collect go through the families or a registry.

// EncodedFamily is a family of the nodes' series, encoded: its header
// lines (HELP, TYPE), then each node's lines, each a piece of its own.
type EncodedFamily struct {
	Name   string
	Chunks []gzchunk.Chunk // the header's first
}

// Encoded is a scrape in one text format: the families of the nodes'
// series, encoded, and the scrape's own gauges (the consoles' up, the
// sub-collectors' duration and success) as families to encode.
type Encoded struct {
	Families []EncodedFamily     // sorted by name
	Scrape   []*dto.MetricFamily // sorted by name
}

// Encodable tells whether ScrapeEncoded writes format: the text formats
// (Prometheus text, OpenMetrics).
func Encodable(format expfmt.Format) bool {
	switch format.FormatType() {
	case expfmt.TypeTextPlain, expfmt.TypeOpenMetrics:
		return true
	}
	return false
}

// ScrapeEncoded polls every node within ctx's deadline, as Scrape does,
// and returns the scrape encoded in format (Encodable). Each node is
// encoded as soon as its poll ends, while the others are polled, so that
// a large fleet's scrape does not end with every node encoded one after
// the other. A scrape that meets another encoding (two Prometheus
// servers) polls with it (shared polls) and encodes after it.
func (e *Exporter) ScrapeEncoded(ctx context.Context, format expfmt.Format) Encoded {
	enc, _ := e.scrapeEncoded(ctx, format)
	return enc
}

// scrapeEncoded is ScrapeEncoded, also returning the polls' results.
func (e *Exporter) scrapeEncoded(ctx context.Context, format expfmt.Format) (Encoded, []poller.Result) {
	clusters := e.seriesOf(e.p.Current())
	c := &e.encoded
	if !c.mu.TryLock() {
		results := e.poll(ctx, clusters, nil)
		return e.encode(format, clusters, results), results
	}
	defer c.mu.Unlock()
	se := c.begin(e, format, clusters)
	results := e.poll(ctx, clusters, se.node)
	return se.finish(results), results
}

// encode emits the nodes of clusters from results (as emit) and returns
// them encoded in format, the nodes encoded concurrently.
func (e *Exporter) encode(format expfmt.Format, clusters []*clusterSeries, results []poller.Result) Encoded {
	c := &e.encoded
	c.mu.Lock()
	defer c.mu.Unlock()
	se := c.begin(e, format, clusters)
	var wg sync.WaitGroup
	for i, res := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			se.node(i, res)
		}()
	}
	wg.Wait()
	return se.finish(results)
}

// scrapeEncoding is one scrape being encoded; its node method may be
// called concurrently, for different nodes.
type scrapeEncoding struct {
	e        *Exporter
	c        *encodedCache
	clusters []*clusterSeries
	nodes    []nodeAt     // every node of clusters, in order
	chunks   [][]famChunk // by node: its encoded families
	window   time.Duration
	stats    *subStats
}

// nodeAt is a node and the descriptors of its cluster.
type nodeAt struct {
	d  *descs
	ns nodeSeries
}

// begin starts encoding a scrape of clusters in format; c.mu is held.
func (c *encodedCache) begin(e *Exporter, format expfmt.Format, clusters []*clusterSeries) *scrapeEncoding {
	c.logger = e.logger
	c.prepare(format, clusters)
	se := &scrapeEncoding{e: e, c: c, clusters: clusters, window: e.p.LateWindow(), stats: newSubStats(len(e.subs))}
	for _, cs := range clusters {
		for _, ns := range cs.nodes {
			se.nodes = append(se.nodes, nodeAt{d: cs.d, ns: ns})
		}
	}
	se.chunks = make([][]famChunk, len(se.nodes))
	return se
}

// node emits node i's series from its result and encodes them, with one
// of the cache's encoders (it waits for one to be free).
func (se *scrapeEncoding) node(i int, res poller.Result) {
	w := <-se.c.encoders
	defer func() { se.c.encoders <- w }()
	n := se.nodes[i]
	se.e.emitNode(&w.node, &w.keys, n.d, n.ns, res, se.window, se.stats)
	se.chunks[i] = se.c.encodeNode(w, se.c.cur.nodes[n.ns.n])
	w.node.reset()
}

// finish keeps the nodes' encoded families for the next scrape and returns
// the scrape's encoding, with the scrape's gauges from results.
func (se *scrapeEncoding) finish(results []poller.Result) Encoded {
	var scrape familySink
	se.e.emitScrape(&scrape, se.clusters, results, se.stats)
	out := Encoded{Scrape: scrape.gathered()}
	cur := se.c.cur
	// The families' chunks in one array, each family's part sized first:
	// appended family by family, the lists were re-made as they grew, a
	// twelfth of what a large scrape allocated.
	sizes := map[int]int{}
	total := 0
	for i, n := range se.nodes {
		cur.nodes[n.ns.n] = se.chunks[i]
		for _, fc := range se.chunks[i] {
			if sizes[fc.fam] == 0 {
				sizes[fc.fam]++ // the family's header
				total++
			}
			sizes[fc.fam]++
			total++
		}
	}
	all := make([]gzchunk.Chunk, 0, total)
	byFam := make(map[int]*EncodedFamily, len(sizes))
	for _, chunks := range se.chunks {
		for _, fc := range chunks {
			ef := byFam[fc.fam]
			if ef == nil {
				n := sizes[fc.fam]
				ef = &EncodedFamily{Name: cur.names[fc.fam], Chunks: append(all[len(all):len(all):len(all)+n], cur.headers[fc.fam])}
				all = all[:len(all)+n]
				byFam[fc.fam] = ef
			}
			ef.Chunks = append(ef.Chunks, fc.chunk)
		}
	}
	for _, ef := range byFam {
		out.Families = append(out.Families, *ef)
	}
	sort.Slice(out.Families, func(i, j int) bool { return out.Families[i].Name < out.Families[j].Name })
	return out
}

// WriteEncoded writes to w, as one gzip stream, the families of enc and
// others (gathered elsewhere, such as the exporter's own metrics), in the
// order of their names, as promhttp writes families in format: the
// families that are not the nodes' are encoded now, with comp compressing
// each run of them. A name of others that is also a node family's is left
// out (not expected: they are named apart; a scraper takes one family of a
// name) and reported in the error, as is an encoding error; the stream is
// whole all the same.
func WriteEncoded(w io.Writer, format expfmt.Format, enc Encoded, others []*dto.MetricFamily, comp *gzchunk.Compressor) error {
	dynamic := append(slices.Clone(others), enc.Scrape...)
	sort.SliceStable(dynamic, func(i, j int) bool { return dynamic[i].GetName() < dynamic[j].GetName() })
	var errs []error
	// The pieces are small (a line or two, often) and go through the
	// response writer's layers one by one: a buffer of our own makes
	// them a few large writes.
	bw := bufio.NewWriterSize(w, 64<<10)
	gw := gzchunk.NewWriter(bw)
	var text bytes.Buffer
	encoder := expfmt.NewEncoder(&text, format)
	flush := func() {
		if text.Len() > 0 {
			gw.Add(comp.CompressFixed(text.Bytes())) // encoded anew at every scrape
			text.Reset()
		}
	}
	fams := enc.Families
	for len(dynamic) > 0 || len(fams) > 0 {
		switch {
		case len(fams) == 0 || len(dynamic) > 0 && dynamic[0].GetName() < fams[0].Name:
			if err := encoder.Encode(dynamic[0]); err != nil {
				errs = append(errs, fmt.Errorf("family %s: %w", dynamic[0].GetName(), err))
			}
			dynamic = dynamic[1:]
		case len(dynamic) > 0 && dynamic[0].GetName() == fams[0].Name:
			errs = append(errs, fmt.Errorf("family %s gathered twice: the nodes' is served", fams[0].Name))
			dynamic = dynamic[1:]
		default:
			flush()
			for _, c := range fams[0].Chunks {
				gw.Add(c)
			}
			fams = fams[1:]
		}
	}
	if closer, ok := encoder.(expfmt.Closer); ok {
		if err := closer.Close(); err != nil { // OpenMetrics' "# EOF"
			errs = append(errs, err)
		}
	}
	flush()
	if err := gw.Close(); err != nil {
		errs = append(errs, err)
	}
	if err := bw.Flush(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// encodedCache is what the latest scrapes encoded, for one configuration,
// in the latest maxFormats formats (two Prometheus servers of different
// lines, during an upgrade, ask for different ones).
type encodedCache struct {
	mu      sync.Mutex
	series  []*clusterSeries // the configuration (seriesOf's slice)
	formats []*formatCache   // the latest used first
	cur     *formatCache     // the format of the scrape encoding
	seed    maphash.Seed
	logger  log.Logger

	// encoders are the scratch of the nodes being encoded: one per
	// processor, since encoding is all CPU, up to maxEncoders.
	encoders chan *nodeEncoder
}

// maxEncoders bounds the encoders on a machine of many cores: each holds a
// compressor (its matcher is 32 KiB) and scratch, and encoding is a
// fraction of a node's CPU (the polls run beside it).
const maxEncoders = 4

// nodeEncoder is the scratch of one node's encoding.
type nodeEncoder struct {
	node familySink       // the node's series, emptied after each node
	keys []string         // sortedKeys' scratch
	one  dto.MetricFamily // a family of one histogram series (encodeNode)
	comp *gzchunk.Compressor
	text bytes.Buffer
	hash maphash.Hash
	// enc writes into text in encFormat (an encoder keeps no state
	// between families but its writer's).
	enc       expfmt.Encoder
	encFormat expfmt.Format
}

const maxFormats = 2

// formatCache is the encoded lines of one format.
type formatCache struct {
	format expfmt.Format
	nodes  map[*poller.NodeRuntime][]famChunk // written by scrapeEncoding.finish only

	mu      sync.Mutex            // nodes are encoded concurrently
	headers map[int]gzchunk.Chunk // by family index
	names   map[int]string
}

// famChunk is a node's lines of a family (of one series, for a histogram),
// and the hash of the series they encode.
type famChunk struct {
	fam   int
	sum   uint64
	chunk gzchunk.Chunk
}

// prepare sets the cache for format and clusters, emptied when the
// configuration changed.
func (c *encodedCache) prepare(format expfmt.Format, clusters []*clusterSeries) {
	if c.encoders == nil {
		c.seed = maphash.MakeSeed()
		n := min(runtime.GOMAXPROCS(0), maxEncoders)
		c.encoders = make(chan *nodeEncoder, n)
		for range n {
			w := &nodeEncoder{}
			w.hash.SetSeed(c.seed)
			c.encoders <- w
		}
	}
	if len(c.series) != len(clusters) || len(clusters) > 0 && &c.series[0] != &clusters[0] {
		c.series, c.formats = clusters, nil
	}
	for i, fc := range c.formats {
		if fc.format == format {
			c.cur = fc
			c.formats = append(append([]*formatCache{fc}, c.formats[:i]...), c.formats[i+1:]...)
			return
		}
	}
	c.cur = &formatCache{format: format, nodes: map[*poller.NodeRuntime][]famChunk{},
		headers: map[int]gzchunk.Chunk{}, names: map[int]string{}}
	c.formats = append([]*formatCache{c.cur}, c.formats[:min(len(c.formats), maxFormats-1)]...)
}

// encodeNode returns the node's families of w.node, each reused from old
// (the node's at the scrape before) when its series hash the same, else
// encoded and compressed. A histogram family is kept series by series: a
// node's histograms are most of its text, and a new event changes the
// histogram of its type only.
func (c *encodedCache) encodeNode(w *nodeEncoder, old []famChunk) []famChunk {
	out := make([]famChunk, 0, len(old))
	for fam, mf := range w.node.fams {
		if mf == nil || len(mf.Metric) == 0 {
			continue
		}
		if mf.GetType() != dto.MetricType_HISTOGRAM {
			out = c.keep(w, out, old, fam, mf)
			continue
		}
		one := &w.one
		one.Name, one.Help, one.Type = mf.Name, mf.Help, mf.Type
		for _, m := range mf.Metric {
			one.Metric = append(one.Metric[:0], m)
			out = c.keep(w, out, old, fam, one)
		}
		one.Metric[0] = nil
	}
	return out
}

// keep appends to out the chunk of mf's series: old's when one of family
// fam hashes the same, else mf encoded.
func (c *encodedCache) keep(w *nodeEncoder, out, old []famChunk, fam int, mf *dto.MetricFamily) []famChunk {
	sum := w.sum(mf)
	for _, fc := range old {
		if fc.fam == fam && fc.sum == sum {
			return append(out, fc)
		}
	}
	chunk, ok := c.encode(w, fam, mf)
	if !ok {
		return out
	}
	return append(out, famChunk{fam: fam, sum: sum, chunk: chunk})
}

// compressor returns w's compressor, made at its first use.
func (w *nodeEncoder) compressor() *gzchunk.Compressor {
	if w.comp == nil {
		w.comp = gzchunk.NewCompressor()
	}
	return w.comp
}

// encode returns the compressed lines of mf in the cache's format, and
// keeps the family's header lines at its first encoding.
func (c *encodedCache) encode(w *nodeEncoder, fam int, mf *dto.MetricFamily) (gzchunk.Chunk, bool) {
	w.text.Reset()
	if w.enc == nil || w.encFormat != c.cur.format {
		// One encoder per format: making one for each family (it parses
		// the format) was a fifth of the encoding's CPU.
		w.enc, w.encFormat = expfmt.NewEncoder(&w.text, c.cur.format), c.cur.format
	}
	if err := w.enc.Encode(mf); err != nil {
		// Not expected: the series are valid by construction (series.go).
		level.Error(c.logger).Log("msg", "cannot encode a family", "family", mf.GetName(), "err", err)
		return gzchunk.Chunk{}, false
	}
	b := w.text.Bytes()
	end := 0 // of the header lines, which start with '#'
	for end < len(b) && b[end] == '#' {
		i := bytes.IndexByte(b[end:], '\n')
		if i < 0 {
			end = len(b)
			break
		}
		end += i + 1
	}
	cur := c.cur
	cur.mu.Lock()
	if _, ok := cur.headers[fam]; !ok {
		cur.headers[fam], cur.names[fam] = gzchunk.Stored(b[:end]), mf.GetName()
	}
	cur.mu.Unlock()
	if lines := b[end:]; len(lines) < compressAtOnce {
		return gzchunk.Stored(lines), true
	}
	// Fixed codes: building a piece's own codes was two thirds of its
	// cost, for a sixth fewer bytes.
	return w.compressor().CompressFixed(b[end:]), true
}

// compressAtOnce is the length of text compressed as soon as it is
// encoded; a line or two shorter is kept stored (uncompressed), which
// costs a few bytes more than compressed and nothing to make. Compressed
// with fixed codes (cheap to make), the pieces of 128 bytes and more took
// the resident memory at 2000 nodes from 95 to 86 MiB, against keeping
// those under a KiB stored until they had stayed three scrapes and
// compressing them then.
const compressAtOnce = 128

// sum hashes what mf's series encode: their label values, values, created
// timestamps and buckets (the label names and the family's header are the
// family's, the same at every scrape).
func (w *nodeEncoder) sum(mf *dto.MetricFamily) uint64 {
	h := &w.hash
	h.Reset()
	var b [8]byte
	u64 := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	f64 := func(v float64) { u64(math.Float64bits(v)) }
	created := func(ts interface {
		GetSeconds() int64
		GetNanos() int32
	}) {
		u64(uint64(ts.GetSeconds()))
		u64(uint64(ts.GetNanos()))
	}
	for _, m := range mf.Metric {
		for _, p := range m.Label {
			h.WriteString(p.GetValue())
			h.WriteByte(0)
		}
		switch {
		case m.Gauge != nil:
			f64(m.Gauge.GetValue())
		case m.Counter != nil:
			f64(m.Counter.GetValue())
			created(m.Counter.GetCreatedTimestamp())
		case m.Histogram != nil:
			u64(m.Histogram.GetSampleCount())
			f64(m.Histogram.GetSampleSum())
			created(m.Histogram.GetCreatedTimestamp())
			for _, bk := range m.Histogram.Bucket {
				f64(bk.GetUpperBound())
				u64(bk.GetCumulativeCount())
			}
		}
		h.WriteByte(0xff)
	}
	return h.Sum64()
}
