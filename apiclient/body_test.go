package apiclient

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSanitize(t *testing.T) {
	cases := map[string]string{
		"plain":               "plain",
		"a\nb\r\tc":           `a\nb\r\tc`,
		"nul\x00bell\x07":     `nul\u0000bell\u0007`,
		"bad \xff\xfe utf8":   "bad \uFFFD\uFFFD utf8",
		"é and 😀":             "é and 😀",
		"del\x7f":             `del\u007f`,
		"line\u2028separator": `line\u2028separator`,
	}
	for in, want := range cases {
		if got := sanitize([]byte(in), 256); got != want {
			t.Errorf("sanitize(%q) = %q, want %q", in, got, want)
		}
	}
	long := bytes.Repeat([]byte("\x01é"), 500)
	got := sanitize(long, maxExcerptBytes)
	if len(got) > maxExcerptBytes || !utf8.ValidString(got) || !strings.HasSuffix(got, "...") {
		t.Fatalf("long excerpt: %d bytes, valid %v: %q", len(got), utf8.ValidString(got), got)
	}
	exact := strings.Repeat("x", 256)
	if got := sanitize([]byte(exact), 256); got != exact {
		t.Fatalf("a body of exactly the limit was cut: %q", got)
	}
}

func gzipped(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func response(body []byte, encoding string) *http.Response {
	h := http.Header{}
	if encoding != "" {
		h.Set("Content-Encoding", encoding)
	}
	return &http.Response{StatusCode: 200, Header: h, Body: io.NopCloser(bytes.NewReader(body))}
}

func TestOpenBodyGzipDetection(t *testing.T) {
	plain := []byte(docListing)
	for name, resp := range map[string]*http.Response{
		"plain":                       response(plain, ""),
		"gzip with header":            response(gzipped(t, plain), "gzip"),
		"gzip without header":         response(gzipped(t, plain), ""),
		"plain despite a gzip header": response(plain, "gzip"),
	} {
		b, err := openBody(resp, 1<<20)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := b.readAll()
		if err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("%s: got %q, %v", name, got, err)
		}
	}
	if _, err := openBody(response(plain, "br"), 1<<20); err == nil {
		t.Fatal("brotli accepted")
	}
}

// TestOpenBodyGzip: short, long and two-member gzip answers read as their
// content, and a corrupted one fails as a gzip error.
func TestOpenBodyGzip(t *testing.T) {
	small := []byte(docListing)
	r := rand.New(rand.NewPCG(5, 6))
	long := make([]byte, 3*rawBufferSize) // random: does not compress
	for i := range long {
		long[i] = 'a' + byte(r.IntN(26))
	}
	z := gzipped(t, small)
	for name, c := range map[string]struct {
		z    []byte
		want []byte
	}{
		"small":       {z, small},
		"long":        {gzipped(t, long), long},
		"two members": {append(bytes.Clone(z), z...), append(bytes.Clone(small), small...)},
	} {
		b, err := openBody(response(c.z, "gzip"), 1<<20)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := b.readAll()
		b.release()
		if err != nil || !bytes.Equal(got, c.want) {
			t.Fatalf("%s: %d bytes, %v", name, len(got), err)
		}
	}
	bad := bytes.Clone(z)
	bad[len(bad)-8] ^= 1 // the CRC
	b, err := openBody(response(bad, "gzip"), 1<<20)
	if err == nil {
		_, err = b.readAll()
		b.release()
	}
	var ge *gzipError
	if !errors.As(err, &ge) {
		t.Fatalf("corrupted small answer: %v, want a gzip error", err)
	}
}

func TestOpenBodyLimitAfterDecompression(t *testing.T) {
	// 8 MiB of spaces inside a listing compress to a few KiB.
	big := append(append([]byte(`{"reqs":[`), bytes.Repeat([]byte(" "), 8<<20)...), `]}`...)
	z := gzipped(t, big)
	if len(z) > 64<<10 {
		t.Fatalf("test bomb too large: %d bytes", len(z))
	}
	b, err := openBody(response(z, "gzip"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	_, err = decodeListing(b.Reader, nopHandler{})
	var tl *bodyTooLargeError
	if !errors.As(err, &tl) || !strings.Contains(err.Error(), "1 MiB") {
		t.Fatalf("got %v, want the size limit error naming 1 MiB", err)
	}
	// Exactly at the limit is fine.
	exact := append([]byte(`{"last":1}`), bytes.Repeat([]byte(" "), 1000-10)...)
	b, _ = openBody(response(exact, ""), 1000)
	if _, err := decodeListing(b.Reader, nopHandler{}); err != nil {
		t.Fatalf("body of exactly the limit: %v", err)
	}
	b, _ = openBody(response(append(exact, ' '), ""), 1000)
	if _, err := decodeListing(b.Reader, nopHandler{}); !errors.As(err, &tl) {
		t.Fatalf("body one byte over the limit: %v", err)
	}
}

func TestOpenBodyTruncatedGzip(t *testing.T) {
	z := gzipped(t, []byte(docListing))
	b, err := openBody(response(z[:len(z)/2], "gzip"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	_, err = decodeListing(b.Reader, nopHandler{})
	var ge *gzipError
	if !errors.As(err, &ge) {
		t.Fatalf("got %T %v, want a gzip error", err, err)
	}
}
