// Package smallgzip decodes a whole gzip stream held in memory, for the
// console's small answers (a count, a steady-state listing: tens to a few
// hundred bytes).
//
// Why not compress/gzip for those: its Reset rebuilds the flate
// decompressor, a struct of more than 4 KiB built on the caller's stack,
// which grows the stack of the poll's new goroutine (a copy of the stack)
// at nearly every answer; the reset and that growth were about a tenth of
// the exporter's CPU per node-scrape (docs/performance.md, "Large
// fleets"). Here the decoder's state lives on the heap and is reused.
//
// Decode reports false for anything it does not take: a multi-member or
// trailing stream, a header CRC, an invalid deflate stream, a CRC-32 or
// length that does not match, an output over the limit. The caller then
// reads the same bytes with compress/gzip, which says why. A wrong decoding
// cannot pass: the trailer's CRC-32 of the output is checked.
package smallgzip

import (
	"encoding/binary"
	"hash/crc32"
	"sync"
)

// Decode appends to dst the content of the gzip stream src, which must be
// whole (one member, nothing after it), and returns it with true; false
// when src is not such a stream or the content is longer than max bytes.
func Decode(dst, src []byte, max int) ([]byte, bool) {
	pos, ok := header(src)
	if !ok {
		return dst, false
	}
	f := inflaters.Get().(*inflater)
	defer func() {
		f.in, f.out = nil, nil // the pooled decoder keeps no caller's buffer
		inflaters.Put(f)
	}()
	f.reset(src[pos:], dst, len(dst)+max)
	if !f.inflate() {
		return dst, false
	}
	// The trailer: CRC-32 and length of the content, little-endian, right
	// after the deflate stream's last byte, and nothing after it.
	rest := f.in[f.pos-int(f.nb/8):]
	if len(rest) != 8 {
		return dst, false
	}
	out := f.out
	content := out[len(dst):]
	if binary.LittleEndian.Uint32(rest) != crc32.ChecksumIEEE(content) ||
		binary.LittleEndian.Uint32(rest[4:]) != uint32(len(content)) {
		return dst, false
	}
	return out, true
}

var inflaters = sync.Pool{New: func() any { return new(inflater) }}

const (
	flagText    = 1 << 0
	flagHCRC    = 1 << 1
	flagExtra   = 1 << 2
	flagName    = 1 << 3
	flagComment = 1 << 4
)

// header returns where the deflate stream of src starts.
func header(src []byte) (int, bool) {
	if len(src) < 18 || src[0] != 0x1f || src[1] != 0x8b || src[2] != 8 {
		return 0, false
	}
	flg := src[3]
	if flg&^(flagText|flagExtra|flagName|flagComment) != 0 {
		return 0, false // reserved bits, or a header CRC: left to compress/gzip
	}
	pos := 10
	if flg&flagExtra != 0 {
		if len(src) < pos+2 {
			return 0, false
		}
		pos += 2 + int(binary.LittleEndian.Uint16(src[pos:]))
	}
	for _, f := range []byte{flagName, flagComment} {
		if flg&f == 0 {
			continue
		}
		for pos < len(src) && src[pos] != 0 {
			pos++
		}
		pos++ // the terminating zero
	}
	if pos > len(src) {
		return 0, false
	}
	return pos, true
}
