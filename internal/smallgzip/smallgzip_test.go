package smallgzip

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

func gz(t testing.TB, level int, data []byte, name string) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := gzip.NewWriterLevel(&b, level)
	if err != nil {
		t.Fatal(err)
	}
	w.Name = name
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// samples are contents like the console's answers, and the odd ones: empty,
// random (stored blocks), long runs (distances that overlap).
func samples() map[string][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 3000)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	var listing strings.Builder
	listing.WriteString(`{"reqs":[`)
	for i := range 40 {
		fmt.Fprintf(&listing, `{"type":"QUERY_%d","date":%d,"duration":%d,"comment":"node-%d"},`, i%7, 1764000000000+int64(i)*137, i*3, i%3)
	}
	listing.WriteString(`],"last":1764000009999}`)
	return map[string][]byte{
		"empty":   {},
		"count":   []byte("1234"),
		"listing": []byte(listing.String()),
		"random":  random,
		"run":     bytes.Repeat([]byte("a"), 5000),
		"mixed":   append(append([]byte(listing.String()), random[:500]...), bytes.Repeat([]byte("xyz"), 400)...),
	}
}

// TestDecodeIsWhatGzipReads: every level (stored, fixed and dynamic blocks),
// with a file name in the header or not, decodes to the content.
func TestDecodeIsWhatGzipReads(t *testing.T) {
	for name, data := range samples() {
		for level := gzip.HuffmanOnly; level <= gzip.BestCompression; level++ {
			for _, fname := range []string{"", "answer.json"} {
				z := gz(t, level, data, fname)
				got, ok := Decode([]byte("kept:"), z, len(data))
				if !ok {
					t.Fatalf("%s level %d name %q: not decoded", name, level, fname)
				}
				if !bytes.Equal(got, append([]byte("kept:"), data...)) {
					t.Fatalf("%s level %d: decoded %d bytes, differ from the %d", name, level, len(got)-5, len(data))
				}
			}
		}
	}
}

// TestDecodeFlushedStreams: a stream flushed between writes (blocks of
// every kind after one another, empty stored blocks among them), as
// servers that stream their answers send.
func TestDecodeFlushedStreams(t *testing.T) {
	s := samples()
	parts := [][]byte{s["listing"], s["random"][:700], s["run"][:300], s["count"], s["random"][700:900]}
	for level := gzip.HuffmanOnly; level <= gzip.BestCompression; level++ {
		var b bytes.Buffer
		w, err := gzip.NewWriterLevel(&b, level)
		if err != nil {
			t.Fatal(err)
		}
		var want []byte
		for _, p := range parts {
			want = append(want, p...)
			if _, err := w.Write(p); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got, ok := Decode(nil, b.Bytes(), len(want))
		if !ok || !bytes.Equal(got, want) {
			t.Fatalf("level %d: ok %v, %d bytes of %d", level, ok, len(got), len(want))
		}
	}
}

// TestDecodeRefuses: what it does not take, it says so, and the content is
// not returned: over the limit, a bad CRC or length, a truncated stream,
// trailing bytes, two members, a header CRC.
func TestDecodeRefuses(t *testing.T) {
	data := samples()["listing"]
	z := gz(t, gzip.BestSpeed, data, "")
	mut := func(f func([]byte) []byte) []byte { return f(bytes.Clone(z)) }
	cases := map[string][]byte{
		"bad crc":      mut(func(b []byte) []byte { b[len(b)-8] ^= 1; return b }),
		"bad length":   mut(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }),
		"truncated":    z[:len(z)-9],
		"no trailer":   z[:len(z)-8],
		"trailing":     append(bytes.Clone(z), 0),
		"two members":  append(bytes.Clone(z), z...),
		"header crc":   mut(func(b []byte) []byte { b[3] |= flagHCRC; return b }),
		"not gzip":     data,
		"bad deflate":  mut(func(b []byte) []byte { b[10] = 0xff; return b }),
		"flipped body": mut(func(b []byte) []byte { b[len(b)/2] ^= 0x10; return b }),
	}
	for name, in := range cases {
		if out, ok := Decode(nil, in, 1<<20); ok {
			t.Errorf("%s: decoded (%d bytes)", name, len(out))
		}
	}
	if _, ok := Decode(nil, z, len(data)-1); ok {
		t.Error("decoded past the limit")
	}
}

// FuzzDecode: whatever the bytes, Decode does not panic, and what it
// decodes is what compress/gzip reads from them.
func FuzzDecode(f *testing.F) {
	for _, data := range samples() {
		for _, level := range []int{gzip.HuffmanOnly, gzip.NoCompression, gzip.BestSpeed, gzip.DefaultCompression} {
			f.Add(gz(f, level, data, ""))
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, ok := Decode(nil, in, 1<<20)
		if !ok {
			return
		}
		zr, err := gzip.NewReader(bytes.NewReader(in))
		if err != nil {
			t.Fatalf("decoded %d bytes, compress/gzip refuses the header: %v", len(got), err)
		}
		want, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("decoded %d bytes, compress/gzip fails: %v", len(got), err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("decoded %d bytes, compress/gzip %d", len(got), len(want))
		}
	})
}

// TestDecodeAgreesOnCorruptions: single-byte corruptions of real streams
// are refused or decoded as compress/gzip reads them.
func TestDecodeAgreesOnCorruptions(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for name, data := range samples() {
		for _, level := range []int{gzip.BestSpeed, gzip.DefaultCompression, gzip.HuffmanOnly} {
			z := gz(t, level, data, "")
			for range 300 {
				in := bytes.Clone(z)
				in[r.IntN(len(in))] ^= byte(1 + r.IntN(255))
				got, ok := Decode(nil, in, 1<<20)
				if !ok {
					continue
				}
				zr, err := gzip.NewReader(bytes.NewReader(in))
				if err != nil {
					t.Fatalf("%s: decoded a stream compress/gzip refuses: %v", name, err)
				}
				want, err := io.ReadAll(zr)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("%s: decoded %d bytes, compress/gzip %d (%v)", name, len(got), len(want), err)
				}
			}
		}
	}
}
