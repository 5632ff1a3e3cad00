package gzchunk

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math/bits"

	"github.com/indexima-exporter/indexima_exporter/internal/deflatetab"
)

// Fixed-code compression: LZ77 matches written with deflate's fixed
// Huffman codes (RFC 1951, 3.2.6), for a text that has just changed and may
// change again at the next scrape. compress/flate builds the Huffman codes
// of every piece from its own statistics (three trees, their code lengths
// sorted and packed): for a piece of a KiB or two that is most of its
// cost, where the fixed codes cost nothing to build. Exposition text is
// mostly repeats (metric and label names), which the matches take; the
// literals cost 8 bits each instead of 5 or 6: a piece comes out about a
// sixth longer.

const (
	fixedHashBits = 13
	fixedMinMatch = 4     // a match is found on 4 bytes (the hash's)
	fixedMaxMatch = 258   // deflate's longest
	fixedWindow   = 32768 // deflate's farthest distance
	// fixedMaxText bounds a text taken by fixed codes: positions are kept
	// in int32s offset by a running base (below).
	fixedMaxText = 1 << 24
)

// fixedMatcher is the hash table of recent positions of CompressFixed.
// Positions are stored plus base, which moves past every text so that
// entries of an earlier text are too far back to be taken (no clearing of
// the table between texts).
type fixedMatcher struct {
	table [1 << fixedHashBits]int32
	base  int32
}

// CompressFixed returns the chunk of text compressed with deflate's fixed
// Huffman codes: cheaper to make than Compress for a short text, a little
// longer. Text longer than 16 MiB, or that would not shrink, is stored.
func (c *Compressor) CompressFixed(text []byte) Chunk {
	if len(text) > fixedMaxText {
		return c.Compress(text)
	}
	if c.fixed == nil {
		c.fixed = new(fixedMatcher)
	}
	c.scratch = c.fixed.encode(c.scratch[:0], text)
	if len(c.scratch) >= len(text)+5 {
		return Stored(text)
	}
	return Chunk{z: bytes.Clone(c.scratch), crc: crc32.ChecksumIEEE(text), n: uint32(len(text)), shift: x8nmodp(uint64(len(text)))}
}

// bitWriter packs deflate's bit stream: least significant bit first.
type bitWriter struct {
	out  []byte
	acc  uint64
	nacc uint
}

// put writes the n low bits of v (n <= 32).
func (w *bitWriter) put(v uint32, n uint) {
	w.acc |= uint64(v) << w.nacc
	w.nacc += n
	if w.nacc >= 32 {
		w.out = binary.LittleEndian.AppendUint32(w.out, uint32(w.acc))
		w.acc >>= 32
		w.nacc -= 32
	}
}

// align writes the bits left and pads the last byte with zeros.
func (w *bitWriter) align() {
	for w.nacc > 0 {
		w.out = append(w.out, byte(w.acc))
		w.acc >>= 8
		w.nacc -= min(w.nacc, 8)
	}
	w.acc = 0
}

func load32(b []byte, i int) uint32 { return binary.LittleEndian.Uint32(b[i:]) }

func fixedHash(u uint32) uint32 { return (u * 0x1e35a7bd) >> (32 - fixedHashBits) }

// encode appends to dst one fixed-code block of src, not final, then an
// empty stored block: a sync flush, which leaves the stream byte-aligned.
func (m *fixedMatcher) encode(dst, src []byte) []byte {
	if m.base > 1<<30 {
		m.table = [1 << fixedHashBits]int32{}
		m.base = 0
	}
	base := m.base + fixedWindow + 1 // entries of earlier texts are out of the window
	m.base = base + int32(len(src))
	w := bitWriter{out: dst}
	w.put(0b010, 3) // not final; type 01, fixed codes
	lit := 0        // start of the literals not yet written
	last := len(src) - fixedMinMatch
	for i := 0; i <= last; {
		u := load32(src, i)
		h := fixedHash(u)
		cand := int(m.table[h] - base)
		m.table[h] = int32(i) + base
		if cand < 0 || i-cand > fixedWindow || load32(src, cand) != u {
			i++
			continue
		}
		n := fixedMinMatch
		for limit := min(len(src)-i, fixedMaxMatch); n < limit && src[cand+n] == src[i+n]; n++ {
		}
		for _, b := range src[lit:i] {
			c := fixedLit[b]
			w.put(uint32(c.code), uint(c.n))
		}
		l := fixedLen[n]
		w.put(l.code, uint(l.n))
		d := distCode(i - cand)
		w.put(d.code, uint(d.n))
		i += n
		lit = i
		if i <= last { // the end of the match, for the matches that follow
			m.table[fixedHash(load32(src, i-1))] = int32(i-1) + base
		}
	}
	for _, b := range src[lit:] {
		c := fixedLit[b]
		w.put(uint32(c.code), uint(c.n))
	}
	w.put(0, 7) // end of block: symbol 256, seven zero bits
	// The sync flush: an empty stored block (not final, type 00), padded to
	// a byte, then its length 0 and the length's complement.
	w.put(0, 3)
	w.align()
	return append(w.out, 0, 0, 0xff, 0xff)
}

// fixedCode is a code of deflate's bit stream ready to write: the Huffman
// code's bits reversed (deflate writes a code from its most significant
// bit) and any extra bits after it.
type fixedCode struct {
	code uint32
	n    uint8
}

// reverse returns the n low bits of v in reverse order.
func reverse(v uint32, n uint) uint32 { return bits.Reverse32(v) >> (32 - n) }

// fixedLitLen is the fixed code of literal/length symbol s (RFC 1951,
// 3.2.6).
func fixedLitLen(s int) fixedCode {
	switch {
	case s < 144:
		return fixedCode{reverse(uint32(0x30+s), 8), 8}
	case s < 256:
		return fixedCode{reverse(uint32(0x190+s-144), 9), 9}
	case s < 280:
		return fixedCode{reverse(uint32(s-256), 7), 7}
	default:
		return fixedCode{reverse(uint32(0xc0+s-280), 8), 8}
	}
}

// fixedLit holds the codes of the 256 literals.
var fixedLit = func() (t [256]fixedCode) {
	for b := range t {
		t[b] = fixedLitLen(b)
	}
	return t
}()

// fixedLen holds, by match length (3 to 258), the length symbol's code
// and its extra bits, as one code.
var fixedLen = func() (t [fixedMaxMatch + 1]fixedCode) {
	base := deflatetab.LengthBase
	for s := len(base) - 1; s >= 0; s-- {
		c := fixedLitLen(257 + s)
		top := fixedMaxMatch // 258 has a symbol of its own (285)
		if s+1 < len(base) {
			top = int(base[s+1]) - 1
		}
		for l := int(base[s]); l <= top; l++ {
			t[l] = fixedCode{c.code | uint32(l-int(base[s]))<<c.n, c.n + deflatetab.LengthExtra[s]}
		}
	}
	return t
}()

// distCode returns distance d's code (5 bits) and extra bits, as one code.
func distCode(d int) fixedCode {
	s := distSymbol(d)
	return fixedCode{reverse(uint32(s), 5) | uint32(d-int(deflatetab.DistBase[s]))<<5, 5 + deflatetab.DistExtra[s]}
}

// distSymbol returns the distance symbol of d (1 to 32768): the two
// symbols of each power of two beyond 4 split it in halves.
func distSymbol(d int) int {
	if d <= 4 {
		return d - 1
	}
	k := bits.Len(uint(d-1)) - 1 // 2^k < d <= 2^(k+1)
	return 2*k + int((d-1)>>(k-1)&1)
}
