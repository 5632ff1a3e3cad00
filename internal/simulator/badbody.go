package simulator

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"net/http"
	"strconv"
	"sync"
)

// sampleListing is a valid listing used as the raw material of the bad
// bodies (so that a malformed body looks like a listing up to its flaw).
func (s *Simulator) sampleListing() []byte {
	now := s.clock.Now().UnixMilli()
	evs := make([]Event, 40)
	for i := range evs {
		evs[i] = Event{Type: TableLoaded, Date: now - int64(40-i)*1000, Duration: 120,
			Comment: "sales.orders"}
	}
	return appendListing(nil, evs, nil, now, true, false)
}

func (s *Simulator) writeBadBody(w http.ResponseWriter, r *http.Request, kind BadBody) {
	h := w.Header()
	switch kind {
	case BodyMalformedJSON:
		body := s.sampleListing()
		// Break it between two events (not inside a string, where the
		// flaw would be valid JSON).
		mid := len(body) / 2
		if k := bytes.Index(body[mid:], []byte("},{")); k >= 0 {
			mid += k + 2
		}
		bad := append(append(append([]byte{}, body[:mid]...), `,,#!`...), body[mid:]...)
		s.writeBody(w, r, http.StatusOK, "application/json", bad)
	case BodyTruncatedGzip:
		body := s.sampleListing()
		h.Set("Content-Type", "application/json")
		if acceptsGzip(r) {
			z := gzipBytes(body)
			h.Set("Content-Encoding", "gzip")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(z[:len(z)/2])
			return
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body[:len(body)/2])
	case BodyWrongShape:
		now := s.clock.Now().UnixMilli()
		b := []byte(`{"rows":[{"type":"TABLE_LOADED","date":`)
		b = strconv.AppendInt(b, now, 10)
		b = append(b, `,"duration":12,"comment":"sales.orders"}],"total":1}`...)
		s.writeBody(w, r, http.StatusOK, "application/json", b)
	case BodyHTML:
		h.Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n" +
			"<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"))
	case BodyBomb:
		s.writeBomb(w)
	case BodyEndless:
		s.writeEndless(w, r)
	case BodyMessage:
		s.writeMessage(w, r, http.StatusOK, "Internal error: the node did not answer in time")
	default:
		s.writeMessage(w, r, http.StatusInternalServerError, "unknown injected body kind")
	}
}

// writeEndless streams listing-looking bytes until the client stops reading
// or the simulator closes.
func (s *Simulator) writeEndless(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	ev := Event{Type: TableLoaded, Date: s.clock.Now().UnixMilli(), Duration: 1, Comment: "sales.orders"}
	chunk := []byte{}
	for len(chunk) < 32<<10 {
		chunk = appendEvent(chunk, &ev, true)
		chunk = append(chunk, ',')
	}
	fl, _ := w.(http.Flusher)
	if _, err := w.Write([]byte(`{"reqs":[`)); err != nil {
		return
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.closed:
			return
		default:
		}
		if _, err := w.Write(chunk); err != nil {
			return
		}
		if fl != nil {
			fl.Flush()
		}
	}
}

// ---- the gzip bomb ----

const (
	bombChunk  = 1 << 20 // bytes of spaces per repeated deflate segment
	bombChunks = 10 << 10
	bombPrefix = `{"reqs":[`
)

var bomb struct {
	once          sync.Once
	head, repeat  []byte // deflate segments, byte-aligned, self-contained
	crc           uint32
	expandedBytes int64
}

// buildBomb compresses one megabyte of spaces once; the body repeats that
// segment ten thousand times. Each segment is self-contained (its back
// references stay inside it) and ends on a byte boundary (sync flush), so the
// concatenation is a valid deflate stream of 10 GiB built from ~1 KiB. The
// ratio of deflate is at most ~1030:1, so the body is ~10 MiB on the wire.
func buildBomb() {
	spaces := bytes.Repeat([]byte{' '}, bombChunk)
	seg := func(data []byte) []byte {
		var buf bytes.Buffer
		fw, _ := flate.NewWriter(&buf, flate.BestCompression)
		_, _ = fw.Write(data)
		_ = fw.Flush()
		return buf.Bytes()
	}
	head := append([]byte(bombPrefix), spaces[len(bombPrefix):]...)
	bomb.head = seg(head)
	bomb.repeat = seg(spaces)
	crcHead := crc32.ChecksumIEEE(head)
	crcRep := crc32.ChecksumIEEE(spaces)
	bomb.crc = crc32Repeat(crcHead, crcRep, bombChunk, bombChunks-1)
	bomb.expandedBytes = int64(bombChunk) * bombChunks
}

func (s *Simulator) writeBomb(w http.ResponseWriter) {
	bomb.once.Do(buildBomb)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Encoding", "gzip")
	w.WriteHeader(http.StatusOK)
	gzHeader := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}
	if _, err := w.Write(gzHeader); err != nil {
		return
	}
	if _, err := w.Write(bomb.head); err != nil {
		return
	}
	for i := 1; i < bombChunks; i++ {
		select {
		case <-s.closed:
			return
		default:
		}
		if _, err := w.Write(bomb.repeat); err != nil {
			return
		}
	}
	// Final empty fixed-Huffman block, then the gzip trailer.
	trailer := []byte{0x03, 0x00, 0, 0, 0, 0, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(trailer[2:], bomb.crc)
	binary.LittleEndian.PutUint32(trailer[6:], uint32(bomb.expandedBytes))
	_, _ = w.Write(trailer)
}

// crc32Combine returns the CRC-32 (IEEE) of A||B from crc(A), crc(B) and
// len(B), as zlib's crc32_combine: without it the trailer of a 10 GiB body
// would need 10 GiB of hashing.
func crc32Combine(crc1, crc2 uint32, len2 int64) uint32 {
	if len2 <= 0 {
		return crc1
	}
	var even, odd [32]uint32
	odd[0] = 0xedb88320 // reflected IEEE polynomial
	row := uint32(1)
	for n := 1; n < 32; n++ {
		odd[n] = row
		row <<= 1
	}
	gf2MatrixSquare(even[:], odd[:])
	gf2MatrixSquare(odd[:], even[:])
	for {
		gf2MatrixSquare(even[:], odd[:])
		if len2&1 != 0 {
			crc1 = gf2MatrixTimes(even[:], crc1)
		}
		len2 >>= 1
		if len2 == 0 {
			break
		}
		gf2MatrixSquare(odd[:], even[:])
		if len2&1 != 0 {
			crc1 = gf2MatrixTimes(odd[:], crc1)
		}
		len2 >>= 1
		if len2 == 0 {
			break
		}
	}
	return crc1 ^ crc2
}

// crc32Repeat returns the CRC-32 (IEEE) of A followed by n copies of B from
// crc(A), crc(B) and len(B). Appending B maps the CRC so far through one
// linear operator (then xors crc(B)): the operator is built once here, with
// 32 combines, instead of once per copy. Rebuilding it for each of the
// bomb's 10 239 copies took about 0.5 s of CPU under -race, seconds on a
// loaded machine, all inside the first bomb request and its client's
// timeout.
func crc32Repeat(crcA, crcB uint32, lenB int64, n int) uint32 {
	var op [32]uint32 // column i: bit i of the CRC so far, carried past B
	for i := range op {
		op[i] = crc32Combine(1<<i, 0, lenB)
	}
	c := crcA
	for range n {
		c = gf2MatrixTimes(op[:], c) ^ crcB
	}
	return c
}

func gf2MatrixTimes(mat []uint32, vec uint32) uint32 {
	var sum uint32
	for i := 0; vec != 0; i, vec = i+1, vec>>1 {
		if vec&1 != 0 {
			sum ^= mat[i]
		}
	}
	return sum
}

func gf2MatrixSquare(square, mat []uint32) {
	for n := 0; n < 32; n++ {
		square[n] = gf2MatrixTimes(mat, mat[n])
	}
}
