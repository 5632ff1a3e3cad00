// Package gzchunk writes a gzip stream made of pieces compressed apart,
// some of them long before: a /metrics answer whose nodes' text did not
// change since the scrape before reuses their compressed bytes instead of
// compressing the same text again.
//
// A piece is raw deflate ended by a sync flush (byte-aligned, no final
// block) of a compressor that started empty, so it refers to nothing
// before it; pieces laid end to end are one valid deflate stream. The
// writer adds the gzip header, a final empty block, and the trailer: the
// CRC-32 of the whole text, combined from the pieces' own CRC-32s and
// lengths (as zlib's crc32_combine), and its length.
package gzchunk

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"io"
)

// Chunk is a piece of text compressed apart. Its bytes are never modified
// once made: a Chunk may be written in many streams, at once.
type Chunk struct {
	z      []byte // raw deflate, sync-flushed
	crc    uint32 // CRC-32 (IEEE) of the text
	n      uint32 // length of the text
	shift  uint32 // x^(8n) mod P, to combine crc into a stream's
	stored bool   // z is the text in stored blocks (Stored)
}

// IsStored tells whether c holds its text uncompressed (Stored).
func (c Chunk) IsStored() bool { return c.stored }

// Len is the length of the text of c.
func (c Chunk) Len() int { return int(c.n) }

// Compressor makes Chunks. It is not safe for concurrent use.
type Compressor struct {
	fw  *flate.Writer
	buf bytes.Buffer
	// fixed and scratch are CompressFixed's, made at its first use.
	fixed   *fixedMatcher
	scratch []byte
}

// NewCompressor returns a compressor. Its flate writer (hundreds of KiB)
// and its matcher (32 KiB) are made at their first use.
func NewCompressor() *Compressor { return &Compressor{} }

// Compress returns the chunk of text (which it does not keep), compressed
// at flate.BestSpeed (the level of the exporter's other answers) with
// codes of its own. Text must be shorter than 4 GiB.
func (c *Compressor) Compress(text []byte) Chunk {
	c.buf.Reset()
	if c.fw == nil {
		c.fw, _ = flate.NewWriter(&c.buf, flate.BestSpeed) // the level is valid: no error
	}
	c.fw.Reset(&c.buf)
	c.fw.Write(text) // writes to a bytes.Buffer: no error
	c.fw.Flush()
	return Chunk{z: bytes.Clone(c.buf.Bytes()), crc: crc32.ChecksumIEEE(text), n: uint32(len(text)),
		shift: x8nmodp(uint64(len(text)))}
}

// Stored returns the chunk of text stored uncompressed, at the cost of a
// copy: deflate blocks of stored bytes (at most 65,535 each), each a byte
// of block type (not final, stored) and the length and its complement.
// A line or two compressed alone saves a few bytes at most: the exporter
// keeps such texts stored.
func Stored(text []byte) Chunk {
	z := make([]byte, 0, len(text)+5*(1+len(text)/0xffff))
	rest := text
	for {
		n := min(len(rest), 0xffff)
		z = append(z, 0, byte(n), byte(n>>8), ^byte(n), ^byte(n>>8))
		z = append(z, rest[:n]...)
		rest = rest[n:]
		if len(rest) == 0 {
			break
		}
	}
	return Chunk{z: z, crc: crc32.ChecksumIEEE(text), n: uint32(len(text)), shift: x8nmodp(uint64(len(text))), stored: true}
}

// header is a gzip member header: deflate, no flags, no time, unknown OS.
var header = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255}

// finalBlock is an empty final block of fixed Huffman codes: the end of the
// deflate stream.
var finalBlock = []byte{0x03, 0x00}

// Writer writes one gzip stream of chunks to w.
type Writer struct {
	w       io.Writer
	crc     uint32
	n       uint32
	started bool
	err     error
}

// NewWriter returns a writer of one gzip stream to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

func (g *Writer) write(p []byte) {
	if g.err == nil {
		_, g.err = g.w.Write(p)
	}
}

// Add writes c's bytes and counts its text.
func (g *Writer) Add(c Chunk) {
	if !g.started {
		g.write(header)
		g.started = true
	}
	g.write(c.z)
	g.crc = multmodp(c.shift, g.crc) ^ c.crc
	g.n += c.n
}

// Close ends the stream and returns the first error of a write.
func (g *Writer) Close() error {
	if !g.started {
		g.write(header)
		g.started = true
	}
	g.write(finalBlock)
	var trailer [8]byte
	binary.LittleEndian.PutUint32(trailer[:4], g.crc)
	binary.LittleEndian.PutUint32(trailer[4:], g.n)
	g.write(trailer[:])
	return g.err
}

// The CRC-32 arithmetic of zlib's crc32_combine: polynomials over GF(2)
// modulo the CRC's, bit-reflected. crc(A+B) = crc(A) * x^(8|B|) + crc(B).

const poly = 0xedb88320 // IEEE, reflected

// multmodp returns a*b mod P. Without branches: which bits of a are set is
// as good as random, and the branch of each was mispredicted half the time
// (211 against 38 ns; one multiplication per chunk of an answer).
func multmodp(a, b uint32) uint32 {
	var p uint32
	for range 32 {
		p ^= b & -(a >> 31) // the top bit is x^0 (reflected)
		a <<= 1
		b = b>>1 ^ poly&-(b&1) // b*x
	}
	return p
}

// x2n[k] is x^(2^k) mod P.
var x2n = func() (t [32]uint32) {
	p := uint32(1) << 30 // x^1
	for k := range t {
		t[k] = p
		p = multmodp(p, p)
	}
	return t
}()

// x8nmodp returns x^(8n) mod P.
func x8nmodp(n uint64) uint32 {
	p := uint32(1) << 31 // x^0
	for k := 3; n != 0; n, k = n>>1, k+1 {
		if n&1 != 0 {
			p = multmodp(x2n[k&31], p)
		}
	}
	return p
}
