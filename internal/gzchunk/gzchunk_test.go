package gzchunk

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
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
				chunks[i] = c.Compact(Stored(p))
				if chunks[i].IsStored() {
					t.Fatal("Compact left a chunk stored")
				}
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
