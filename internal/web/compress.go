package web

import (
	"compress/gzip"
	"net/http"
	"strings"
	"sync"
)

// fastGzip compresses the answers of h with gzip at gzip.BestSpeed (what
// gzip -1 does) for the clients promhttp would send gzip to. promhttp's own
// compression, at gzip's default level, costs a large exposition much more
// CPU for a few bytes less (docs/performance.md). h must not compress
// itself (promhttp.HandlerOpts.DisableCompression).
func fastGzip(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Accept-Encoding")
		if !acceptsGzip(r.Header) {
			h.ServeHTTP(w, r)
			return
		}
		gw := &gzipResponseWriter{ResponseWriter: w}
		defer gw.finish()
		h.ServeHTTP(gw, r)
	})
}

// gzipWriters keeps gzip writers between answers, each of which would
// otherwise allocate and zero a writer (about 1.2 MiB, most of it tables
// that gzip.BestSpeed does not use): the many small answers of /probe, and
// /metrics. For /metrics it was once left out, a writer kept live between
// scrapes being twice its size in the heap's goal; measured again with the
// text exposition kept between scrapes (docs/performance.md, issue 39), it
// saves 3 to 5 % of the CPU at 200 nodes and half the collections, and the
// day's resident memory is the same (its peaks are scrapes, when a writer
// is live either way).
var gzipWriters = sync.Pool{New: func() any { return newGzipWriter() }}

func newGzipWriter() *gzip.Writer {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed) // the level is valid: no error
	return w
}

// gzipResponseWriter compresses a successful answer; an error answer (its
// status set before the first write) goes out as it is, readable.
type gzipResponseWriter struct {
	http.ResponseWriter
	gz          *gzip.Writer
	wroteHeader bool
}

func (g *gzipResponseWriter) WriteHeader(code int) {
	if g.wroteHeader {
		return
	}
	g.wroteHeader = true
	h := g.Header()
	if code == http.StatusOK && h.Get("Content-Encoding") == "" {
		h.Set("Content-Encoding", "gzip")
		h.Del("Content-Length")
		g.gz = gzipWriters.Get().(*gzip.Writer)
		g.gz.Reset(g.ResponseWriter)
	}
	g.ResponseWriter.WriteHeader(code)
}

func (g *gzipResponseWriter) Write(p []byte) (int, error) {
	if !g.wroteHeader {
		g.WriteHeader(http.StatusOK)
	}
	if g.gz != nil {
		return g.gz.Write(p)
	}
	return g.ResponseWriter.Write(p)
}

// finish ends the gzip stream and keeps the writer for the next answer.
func (g *gzipResponseWriter) finish() {
	if g.gz == nil {
		return
	}
	g.gz.Close()
	g.gz.Reset(nil)
	gzipWriters.Put(g.gz)
	g.gz = nil
}

// acceptsGzip tells whether promhttp, offering gzip then identity, would
// answer h with gzip: of the Accept-Encoding elements naming an offer or
// "*", the one of highest quality wins, the earlier offer on a tie, and
// none at quality 0. Written as client_golang's negotiation (its copy of
// gddo's httputil, which it does not export) reads the header:
// FuzzAcceptsGzipAsPromhttp compares the two on any header.
func acceptsGzip(h http.Header) bool {
	best, bestQ := "", -1.0
	specs := acceptSpecs(h.Values("Accept-Encoding"))
	for _, offer := range []string{"gzip", "identity"} {
		for _, sp := range specs {
			if sp.q > bestQ && (sp.value == "*" || sp.value == offer) {
				best, bestQ = offer, sp.q
			}
		}
	}
	return best == "gzip" && bestQ != 0
}

type acceptSpec struct {
	value string
	q     float64
}

// acceptSpecs parses Accept-Encoding values: a list of tokens, each with
// an optional ";q=" quality; the rest of a value that does not parse is
// left out.
func acceptSpecs(values []string) []acceptSpec {
	var specs []acceptSpec
	for _, s := range values {
		for {
			var sp acceptSpec
			sp.value, s = cutWhile(s, isTokenOrSlash)
			if sp.value == "" {
				break
			}
			sp.q = 1
			_, s = cutWhile(s, isSpace)
			if strings.HasPrefix(s, ";") {
				_, s = cutWhile(s[1:], isSpace)
				if !strings.HasPrefix(s, "q=") {
					break
				}
				if sp.q, s = quality(s[2:]); sp.q < 0 {
					break
				}
			}
			specs = append(specs, sp)
			_, s = cutWhile(s, isSpace)
			if !strings.HasPrefix(s, ",") {
				break
			}
			_, s = cutWhile(s[1:], isSpace)
		}
	}
	return specs
}

// quality reads a quality value ("0", "1", "0.5", "1.000"), -1 when s does
// not start with one.
func quality(s string) (float64, string) {
	if s == "" || s[0] != '0' && s[0] != '1' {
		return -1, ""
	}
	q := float64(s[0] - '0')
	s = s[1:]
	if !strings.HasPrefix(s, ".") {
		return q, s
	}
	digits, rest := cutWhile(s[1:], func(c byte) bool { return '0' <= c && c <= '9' })
	n, d := 0, 1
	for _, c := range []byte(digits) {
		n, d = n*10+int(c-'0'), d*10
	}
	return q + float64(n)/float64(d), rest
}

func cutWhile(s string, ok func(byte) bool) (string, string) {
	i := 0
	for i < len(s) && ok(s[i]) {
		i++
	}
	return s[:i], s[i:]
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// isTokenOrSlash: an HTTP token character (RFC 2616), or '/'.
func isTokenOrSlash(c byte) bool {
	return c == '/' || c > 32 && c < 127 && !strings.ContainsRune(`"(),:;<=>?@[\]{}`, rune(c))
}
