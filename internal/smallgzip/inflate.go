package smallgzip

import "github.com/indexima-exporter/indexima_exporter/internal/deflatetab"

// A deflate decoder (RFC 1951) after zlib's puff: stored, fixed and
// dynamic Huffman blocks, codes looked up in a table of their first
// tableBits bits and the rare longer ones decoded bit by bit.

const (
	maxBits   = 15  // longest code
	maxLit    = 286 // literal/length symbols
	maxDist   = 30  // distance symbols
	tableBits = 9
)

// huffman is a canonical Huffman code: the count of codes of each length,
// the symbols in code order, and the table of codes up to tableBits long
// (entry: symbol<<4 | length; 0: a longer code).
type huffman struct {
	count  [maxBits + 1]uint16
	symbol [288]uint16 // the fixed code has 288 (two never used)
	table  [1 << tableBits]uint16
}

// build makes h from the code lengths of its symbols; false for an
// over-subscribed set of lengths. An incomplete code is allowed (a single
// distance code is common); its missing codes fail when met.
func (h *huffman) build(lengths []uint8) bool {
	h.count = [maxBits + 1]uint16{}
	for _, l := range lengths {
		h.count[l]++
	}
	if int(h.count[0]) == len(lengths) {
		h.table = [1 << tableBits]uint16{}
		return true // no codes: a block using it fails when it decodes one
	}
	left := 1
	for l := 1; l <= maxBits; l++ {
		left <<= 1
		left -= int(h.count[l])
		if left < 0 {
			return false
		}
	}
	var offs [maxBits + 2]uint16
	for l := 1; l <= maxBits; l++ {
		offs[l+1] = offs[l] + h.count[l]
	}
	for sym, l := range lengths {
		if l != 0 {
			h.symbol[offs[l]] = uint16(sym)
			offs[l]++
		}
	}
	// The table: each code of up to tableBits bits, bit-reversed (deflate
	// sends codes from their first bit, which is the low bit read), in
	// every entry whose low bits it is.
	h.table = [1 << tableBits]uint16{}
	code, index := 0, 0
	for l := 1; l <= tableBits; l++ {
		for range int(h.count[l]) {
			rev := reverse(code, l)
			for j := rev; j < 1<<tableBits; j += 1 << l {
				h.table[j] = h.symbol[index]<<4 | uint16(l)
			}
			code++
			index++
		}
		code <<= 1
	}
	return true
}

func reverse(code, length int) int {
	r := 0
	for range length {
		r = r<<1 | code&1
		code >>= 1
	}
	return r
}

// inflater is a decoding under way; reused between decodings.
type inflater struct {
	in   []byte
	pos  int    // next byte of in to load
	bits uint64 // loaded bits, the next one lowest
	nb   uint   // number of loaded bits
	out  []byte
	max  int // length out may not pass
	lit  huffman
	dist huffman
	lens [maxLit + maxDist]uint8
}

func (f *inflater) reset(in, out []byte, max int) {
	f.in, f.pos, f.bits, f.nb, f.out, f.max = in, 0, 0, 0, out, max
}

// need loads bits until n are there; false at the end of the input.
func (f *inflater) need(n uint) bool {
	for f.nb < n {
		if f.pos >= len(f.in) {
			return false
		}
		f.bits |= uint64(f.in[f.pos]) << f.nb
		f.pos++
		f.nb += 8
	}
	return true
}

// get reads n bits (n <= 16).
func (f *inflater) get(n uint) (int, bool) {
	if !f.need(n) {
		return 0, false
	}
	v := int(f.bits & (1<<n - 1))
	f.bits >>= n
	f.nb -= n
	return v, true
}

// decode reads one symbol of h; -1 for an invalid code or the end of the
// input.
func (f *inflater) decode(h *huffman) int {
	f.need(tableBits) // as many as there are: a short last code needs fewer
	if e := h.table[f.bits&(1<<tableBits-1)]; e != 0 {
		if l := uint(e & 15); l <= f.nb {
			f.bits >>= l
			f.nb -= l
			return int(e >> 4)
		}
		return -1
	}
	// A code longer than the table: canonical decoding, bit by bit.
	code, first, index := 0, 0, 0
	for l := 1; l <= maxBits; l++ {
		b, ok := f.get(1)
		if !ok {
			return -1
		}
		code |= b
		count := int(h.count[l])
		if code-count < first {
			return int(h.symbol[index+code-first])
		}
		index += count
		first += count
		first <<= 1
		code <<= 1
	}
	return -1
}

// inflate decodes the blocks up to the last one; false on an invalid or
// truncated stream or an output over max.
func (f *inflater) inflate() bool {
	for {
		last, ok := f.get(1)
		if !ok {
			return false
		}
		typ, ok := f.get(2)
		if !ok {
			return false
		}
		switch typ {
		case 0:
			ok = f.stored()
		case 1:
			ok = f.codes(fixedLit, fixedDist)
		case 2:
			ok = f.dynamic() && f.codes(&f.lit, &f.dist)
		default:
			return false
		}
		if !ok {
			return false
		}
		if last == 1 {
			f.bits >>= f.nb % 8 // to the byte: the trailer follows
			f.nb -= f.nb % 8
			return true
		}
	}
}

func (f *inflater) stored() bool {
	f.bits >>= f.nb % 8
	f.nb -= f.nb % 8
	n, ok1 := f.get(16)
	cn, ok2 := f.get(16)
	if !ok1 || !ok2 || n != ^cn&0xffff || len(f.out)+n > f.max {
		return false
	}
	for ; n > 0 && f.nb >= 8; n-- { // bytes already loaded
		f.out = append(f.out, byte(f.bits))
		f.bits >>= 8
		f.nb -= 8
	}
	if f.pos+n > len(f.in) {
		return false
	}
	f.out = append(f.out, f.in[f.pos:f.pos+n]...)
	f.pos += n
	return true
}

// codes decodes a block's symbols with lit and dist up to its end.
func (f *inflater) codes(lit, dist *huffman) bool {
	for {
		sym := f.decode(lit)
		switch {
		case sym < 0:
			return false
		case sym < 256:
			if len(f.out) >= f.max {
				return false
			}
			f.out = append(f.out, byte(sym))
		case sym == 256:
			return true
		default:
			sym -= 257
			if sym >= len(deflatetab.LengthBase) {
				return false
			}
			extra, ok := f.get(uint(deflatetab.LengthExtra[sym]))
			if !ok {
				return false
			}
			n := int(deflatetab.LengthBase[sym]) + extra
			ds := f.decode(dist)
			if ds < 0 || ds >= len(deflatetab.DistBase) {
				return false
			}
			extra, ok = f.get(uint(deflatetab.DistExtra[ds]))
			if !ok {
				return false
			}
			d := int(deflatetab.DistBase[ds]) + extra
			if d > len(f.out) || len(f.out)+n > f.max {
				return false
			}
			from := len(f.out) - d
			for i := range n { // byte by byte: the copy may overlap itself
				f.out = append(f.out, f.out[from+i])
			}
		}
	}
}

// order of the code length codes' lengths in a dynamic block's header.
var order = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// dynamic reads a dynamic block's codes into f.lit and f.dist.
func (f *inflater) dynamic() bool {
	nlen, ok1 := f.get(5)
	ndist, ok2 := f.get(5)
	ncode, ok3 := f.get(4)
	if !ok1 || !ok2 || !ok3 {
		return false
	}
	nlen, ndist, ncode = nlen+257, ndist+1, ncode+4
	if nlen > maxLit || ndist > maxDist {
		return false
	}
	var cl [19]uint8
	for i := range ncode {
		v, ok := f.get(3)
		if !ok {
			return false
		}
		cl[order[i]] = uint8(v)
	}
	// The code lengths' own code, in f.lit for the while.
	if !f.lit.build(cl[:]) {
		return false
	}
	lens := f.lens[:nlen+ndist]
	for i := 0; i < len(lens); {
		sym := f.decode(&f.lit)
		if sym < 0 {
			return false
		}
		if sym < 16 {
			lens[i] = uint8(sym)
			i++
			continue
		}
		var v uint8
		var rep int
		var ok bool
		switch sym {
		case 16:
			if i == 0 {
				return false
			}
			v = lens[i-1]
			rep, ok = f.get(2)
			rep += 3
		case 17:
			rep, ok = f.get(3)
			rep += 3
		default:
			rep, ok = f.get(7)
			rep += 11
		}
		if !ok || i+rep > len(lens) {
			return false
		}
		for range rep {
			lens[i] = v
			i++
		}
	}
	if lens[256] == 0 { // no end-of-block code
		return false
	}
	return f.lit.build(lens[:nlen]) && f.dist.build(lens[nlen:])
}

// The fixed codes of block type 1.
var fixedLit, fixedDist = func() (*huffman, *huffman) {
	var l [288]uint8
	for i := range l {
		switch {
		case i < 144:
			l[i] = 8
		case i < 256:
			l[i] = 9
		case i < 280:
			l[i] = 7
		default:
			l[i] = 8
		}
	}
	lit, dist := new(huffman), new(huffman)
	var d [30]uint8
	for i := range d {
		d[i] = 5
	}
	lit.build(l[:])
	dist.build(d[:])
	return lit, dist
}()
