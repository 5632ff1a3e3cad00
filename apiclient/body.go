package apiclient

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"unicode/utf8"
)

// maxExcerptBytes bounds the body excerpt carried by errors.
const maxExcerptBytes = 256

// maxRawBytes bounds VersionInfo.Raw and ColumnsInfo.Raw.
const maxRawBytes = 1024

// maxErrorBodyBytes bounds what is read of a non-2xx answer.
const maxErrorBodyBytes = 4096

// decoderBufferSize is the bufio buffer the decoders scan in place.
const decoderBufferSize = 16 << 10

// bodyTooLargeError is a body that grew past Config.MaxBodyBytes after
// decompression (a decompression bomb, an endless body, or a huge answer).
type bodyTooLargeError struct{ limit int64 }

func (e *bodyTooLargeError) Error() string {
	return fmt.Sprintf("body larger than the limit of %s after decompression (raise max body bytes if the answer is genuine)", byteSize(e.limit))
}

// gzipError is a compressed body that cannot be decompressed.
type gzipError struct{ err error }

func (e *gzipError) Error() string { return "invalid gzip body: " + e.err.Error() }
func (e *gzipError) Unwrap() error { return e.err }

func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// limitReader fails with bodyTooLargeError once more than limit bytes have
// been read, instead of silently truncating as io.LimitReader does.
type limitReader struct {
	r     io.Reader
	left  int64
	limit int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, &bodyTooLargeError{limit: l.limit}
	}
	// Read one byte more than allowed, to tell "exactly limit" from "more".
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n + int(l.left), &bodyTooLargeError{limit: l.limit}
	}
	return n, err
}

// gzipReader turns decompression errors into gzipError.
type gzipReader struct{ z *gzip.Reader }

func (g gzipReader) Read(p []byte) (int, error) {
	n, err := g.z.Read(p)
	if err != nil && err != io.EOF {
		var tooLarge *bodyTooLargeError
		if !errors.As(err, &tooLarge) && !isContextError(err) {
			err = &gzipError{err: err}
		}
	}
	return n, err
}

// headKeeper remembers the first bytes read through it, for error excerpts.
type headKeeper struct {
	r    io.Reader
	head []byte
}

func (h *headKeeper) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if room := maxExcerptBytes - len(h.head); room > 0 && n > 0 {
		h.head = append(h.head, p[:min(n, room)]...)
	}
	return n, err
}

// body is a decompressed, bounded answer body ready for a decoder.
type body struct {
	*bufio.Reader
	head *headKeeper
	raw  *bufio.Reader // pooled, see release
	z    *gzip.Reader  // pooled; nil for a plain body
}

// openBody wraps resp.Body: gzip is detected from Content-Encoding or from
// the gzip magic bytes (some proxies drop the header), plain bodies are
// accepted, and the limit applies to the decompressed bytes so that a small
// compressed bomb is stopped without ever holding its expanded size.
func openBody(resp *http.Response, limit int64) (*body, error) {
	enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding")))
	switch enc {
	case "", "identity", "gzip", "x-gzip":
	default:
		return nil, fmt.Errorf("unsupported Content-Encoding %q (the client asks for gzip only)", truncate(sanitize([]byte(enc), 40), 40))
	}
	b := &body{raw: readerOn(&rawReaders, resp.Body)}
	var r io.Reader = b.raw
	magic, _ := b.raw.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		z, err := getGzip(b.raw)
		if err != nil {
			b.release()
			return nil, &gzipError{err: err}
		}
		b.z = z
		r = gzipReader{z: z}
	}
	b.head = &headKeeper{r: &limitReader{r: r, left: limit, limit: limit}}
	b.Reader = readerOn(&decoderReaders, b.head)
	return b, nil
}

// Bodies are read in a bounded number of slots, and the buffers and gzip
// readers of the slots are reused. A scrape polls every node at once and
// their answers arrive together: unbounded, each open body would hold its
// own decoding buffer and gzip decompressor at once. Decoding a small
// answer takes microseconds, so the slots add no latency; a body that
// trickles holds its slot until the call's timeout at most.
const maxOpenBodies = 16

var (
	bodySlots      = make(chan struct{}, maxOpenBodies)
	rawReaders     = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, rawBufferSize) }}
	decoderReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, decoderBufferSize) }}
	gzipReaders    = sync.Pool{New: func() any { return new(gzip.Reader) }} // its Reset makes the rest
)

// rawBufferSize is the buffer between the connection and gzip.
const rawBufferSize = 4096

// acquireBodySlot waits for a slot to read a body in; false when ctx ends first.
func acquireBodySlot(ctx context.Context) bool {
	select {
	case bodySlots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func releaseBodySlot() { <-bodySlots }

// readerOn returns a reader of free reading r.
func readerOn(free *sync.Pool, r io.Reader) *bufio.Reader {
	br := free.Get().(*bufio.Reader)
	br.Reset(r)
	return br
}

func putReader(free *sync.Pool, br *bufio.Reader) {
	br.Reset(nil)
	free.Put(br)
}

func getGzip(r io.Reader) (*gzip.Reader, error) {
	z := gzipReaders.Get().(*gzip.Reader)
	if err := z.Reset(r); err != nil {
		gzipReaders.Put(z)
		return nil, err
	}
	return z, nil
}

// release hands the body's buffers back for reuse. The body must not be
// read afterwards; decoders copy what they keep (strings, numbers), so
// nothing handed to callers points into these buffers.
func (b *body) release() {
	if b.Reader != nil {
		putReader(&decoderReaders, b.Reader)
		b.Reader = nil
	}
	if b.z != nil {
		gzipReaders.Put(b.z)
		b.z = nil
	}
	if b.raw != nil {
		putReader(&rawReaders, b.raw)
		b.raw = nil
	}
}

// startsLikeJSON tells whether the body's first byte after JSON whitespace
// can start a JSON value. It only peeks, so the decoder still sees the body
// from its start (offsets in its errors are unchanged). An empty body does
// not; a read error, or more leading whitespace than the buffer holds, is
// left for the decoder to report.
func (b *body) startsLikeJSON() bool {
	for i := 1; i <= decoderBufferSize; i++ {
		p, err := b.Peek(i)
		if len(p) < i {
			return err != io.EOF
		}
		switch c := p[i-1]; c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{', '[', '"', '-', 't', 'f', 'n', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			return true
		default:
			return false
		}
	}
	return true
}

// readAll reads a whole (bounded) body, for the small answers.
func (b *body) readAll() ([]byte, error) { return io.ReadAll(b.Reader) }

// excerpt of what was read so far, for errors.
func (b *body) excerpt() string { return sanitize(b.head.head, maxExcerptBytes) }

// readErrorBody reads the start of a non-2xx answer: its excerpt and its
// "message" field when it is a JSON object holding one.
func readErrorBody(resp *http.Response) (excerpt, message string) {
	b, err := openBody(resp, maxErrorBodyBytes)
	if err != nil {
		return "", ""
	}
	data, _ := io.ReadAll(b.Reader)
	b.release()
	if m, ok := jsonMessage(data); ok {
		message = m
	}
	return sanitize(data, maxExcerptBytes), message
}

// sanitize makes body bytes safe to show: valid UTF-8, control characters
// escaped, at most limit bytes (an ellipsis marks a cut).
func sanitize(b []byte, limit int) string {
	const ellipsis = "..."
	var sb strings.Builder
	cut := 0 // length of the output that still leaves room for the ellipsis
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		var piece string
		switch {
		case r == utf8.RuneError && size <= 1:
			piece = "\uFFFD"
		case r == '\n':
			piece = `\n`
		case r == '\r':
			piece = `\r`
		case r == '\t':
			piece = `\t`
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029:
			piece = fmt.Sprintf(`\u%04x`, r)
		default:
			piece = string(b[i : i+size])
		}
		i += size
		if sb.Len()+len(piece) > limit {
			return sb.String()[:cut] + ellipsis
		}
		sb.WriteString(piece)
		if sb.Len() <= limit-len(ellipsis) {
			cut = sb.Len()
		}
	}
	return sb.String()
}

// drain reads a little of what is left so that the connection can be reused,
// then closes the body.
func drain(resp *http.Response) {
	_, _ = io.CopyN(io.Discard, resp.Body, 4096)
	_ = resp.Body.Close()
}
