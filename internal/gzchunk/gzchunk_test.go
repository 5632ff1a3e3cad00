package gzchunk

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
)

// Texts cut at random places, each piece compressed apart (some pieces
// reused in the same stream, as a node whose text did not change is), read
// back by compress/gzip, which checks the CRC-32 and the length of the
// trailer: the bytes are the pieces' text laid end to end.
func TestStreamOfChunksIsTheTextLaidEndToEnd(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	c := NewCompressor()
	for run := range 100 {
		var pieces [][]byte
		for range r.IntN(40) {
			pieces = append(pieces, randomText(r, r.IntN([]int{100, 5000, 150000}[r.IntN(3)])))
		}
		chunks := make([]Chunk, len(pieces))
		for i, p := range pieces {
			switch r.IntN(3) {
			case 0:
				chunks[i] = c.Compress(p)
			case 1:
				chunks[i] = Stored(p)
			default:
				chunks[i] = c.CompressFixed(p)
			}
		}
		var want, stream bytes.Buffer
		g := NewWriter(&stream)
		for range 1 + r.IntN(3) { // the same chunks again: reuse
			for i, ch := range chunks {
				g.Add(ch)
				want.Write(pieces[i])
			}
		}
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
		got := gunzip(t, stream.Bytes())
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("run %d: %d pieces: read back %d bytes, want %d", run, len(pieces), len(got), want.Len())
		}
	}
}

// The trailer's CRC-32 is the text's: a stream with one piece's CRC wrong
// must be refused by a reader (so the test above checks the combination).
func TestReaderRefusesAWrongCRC(t *testing.T) {
	c := NewCompressor()
	a, b := c.Compress([]byte("indexima_up 1\n")), c.Compress([]byte("indexima_up 0\n"))
	b.crc ^= 1
	var stream bytes.Buffer
	g := NewWriter(&stream)
	g.Add(a)
	g.Add(b)
	g.Close()
	zr, err := gzip.NewReader(&stream)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(zr); err == nil {
		t.Fatal("a stream with a wrong CRC-32 was read without error")
	}
}

func TestCombineIsTheCRCOfTheWhole(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		a, b := randomText(r, r.IntN(300)), randomText(r, r.IntN(70000))
		got := multmodp(x8nmodp(uint64(len(b))), crc32.ChecksumIEEE(a)) ^ crc32.ChecksumIEEE(b)
		if want := crc32.ChecksumIEEE(append(append([]byte(nil), a...), b...)); got != want {
			t.Fatalf("combine of %d and %d bytes: %08x, want %08x", len(a), len(b), got, want)
		}
	}
}

func TestEmptyStream(t *testing.T) {
	var stream bytes.Buffer
	if err := NewWriter(&stream).Close(); err != nil {
		t.Fatal(err)
	}
	if got := gunzip(t, stream.Bytes()); len(got) != 0 {
		t.Fatalf("read %q from an empty stream", got)
	}
}

// randomText is exposition-like text (repetitive, so that it compresses)
// with random bytes here and there.
func randomText(r *rand.Rand, n int) []byte {
	var b bytes.Buffer
	for b.Len() < n {
		switch r.IntN(4) {
		case 0:
			b.WriteByte(byte(r.IntN(256)))
		default:
			fmt.Fprintf(&b, "indexima_events_total{event=%q,node=\"node-%03d:9999\"} %d\n", "TABLE_LOADED", r.IntN(2000), r.IntN(1e6))
		}
	}
	return b.Bytes()[:n]
}

func gunzip(t *testing.T, z []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	zr.Multistream(false)
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// Fixed-code chunks read back by compress/flate alone (each is a deflate
// stream of its own until its sync flush) and in a gzip stream beside the
// other kinds: texts of every size, random bytes (which are stored, not
// grown), repeats at every distance up to the window and lengths up to and
// past deflate's longest match.
func TestCompressFixedReadsBack(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	c := NewCompressor()
	texts := [][]byte{nil, []byte("a"), []byte("abc"), []byte("abcd"), []byte("abcdabcd"), bytes.Repeat([]byte("x"), 1000)}
	for _, n := range []int{5, 100, 1024, 5000, 40000, 150000} {
		texts = append(texts, randomText(r, n))
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		texts = append(texts, b)
	}
	for _, d := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 255, 256, 257, 1000, 4096, 16384, 16385, 24576, 24577, 32767, 32768, 32769} {
		for _, l := range []int{4, 5, 10, 11, 257, 258, 259, 600} {
			b := make([]byte, d+l+8)
			for i := range b {
				b[i] = byte(r.IntN(256))
			}
			copy(b[d:], b[:min(l, d)])
			for i := d; i < d+l; i++ { // a repeat of length l at distance d
				b[i] = b[i-d]
			}
			texts = append(texts, b)
		}
	}
	var stream, want bytes.Buffer
	g := NewWriter(&stream)
	for i, text := range texts {
		ch := c.CompressFixed(text)
		if !ch.IsStored() {
			got, err := io.ReadAll(flate.NewReader(bytes.NewReader(ch.z)))
			if err != nil && err != io.ErrUnexpectedEOF { // no final block: the reader wants more
				t.Fatalf("text %d (%d bytes): %v", i, len(text), err)
			}
			if !bytes.Equal(got, text) {
				t.Fatalf("text %d (%d bytes): read back %d bytes, not the text", i, len(text), len(got))
			}
		} else if len(text) > 10 && bytes.Count(text, text[:4]) > 2 {
			t.Errorf("text %d (%d bytes), with repeats, was stored", i, len(text))
		}
		g.Add(ch)
		want.Write(text)
		g.Add(c.Compress(text[:len(text)/2]))
		want.Write(text[:len(text)/2])
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if got := gunzip(t, stream.Bytes()); !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("the stream read back %d bytes, want %d", len(got), want.Len())
	}
}

// Exposition text compresses with fixed codes to within a bound of
// compress/flate's dynamic codes: the matches do most of the work.
func TestCompressFixedShrinksExpositionText(t *testing.T) {
	var text bytes.Buffer
	for i := range 40 {
		fmt.Fprintf(&text, "indexima_event_duration_seconds_bucket{cluster=\"prod\",node=\"node-%03d.example.com:9999\",type=\"TABLE_LOADED\",le=\"%g\"} %d\n", 7, float64(i)*0.25, i*i)
	}
	c := NewCompressor()
	fixed, dynamic := c.CompressFixed(text.Bytes()), c.Compress(text.Bytes())
	t.Logf("%d bytes of text: fixed codes %d, dynamic %d", text.Len(), len(fixed.z), len(dynamic.z))
	if fixed.IsStored() || len(fixed.z) > text.Len()/3 || len(fixed.z) > 2*len(dynamic.z) {
		t.Fatalf("%d bytes of text: fixed codes %d bytes, dynamic %d", text.Len(), len(fixed.z), len(dynamic.z))
	}
}

// Any text reads back whole, alone and after other chunks.
func FuzzCompressFixed(f *testing.F) {
	f.Add([]byte("indexima_events_total{type=\"NODE_DOWN\"} 3\nindexima_events_total{type=\"MEMORY_LOW\"} 3\n"))
	f.Add(bytes.Repeat([]byte{0xff, 0}, 400))
	c := NewCompressor()
	f.Fuzz(func(t *testing.T, text []byte) {
		var stream bytes.Buffer
		g := NewWriter(&stream)
		g.Add(c.CompressFixed(text))
		g.Add(c.CompressFixed(text))
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
		if got := gunzip(t, stream.Bytes()); !bytes.Equal(got, append(slices.Clone(text), text...)) {
			t.Fatalf("read back %q, want the text twice", got)
		}
	})
}
