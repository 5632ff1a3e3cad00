package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/maphash"
	"os"
	"strconv"
	"strings"

	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// A node slot is one header line, the payload (JSON: the node's key and
// state), then blanks up to the file's end (the tail of a longer older
// record, overwritten):
//
//	indexima_exporter state 3 seq=41 len=5120 crc32c=1c2b3a4d
//	{"key":"/core-1:9999","state":{...}}
const (
	recordMagic = "indexima_exporter state"
	headerMax   = 128
	// maxNodeBytes bounds what is read of a slot: a node's state is a few
	// kilobytes (the known events of one late window); a larger file is
	// not one of ours and is not read into memory.
	maxNodeBytes = 16 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func appendRecord(dst []byte, seq uint64, payload []byte) []byte {
	dst = fmt.Appendf(dst, "%s %d seq=%d len=%d crc32c=%08x\n", recordMagic, Format, seq, len(payload), crc32.Checksum(payload, castagnoli))
	return append(dst, payload...)
}

// slotRecord is a slot read back and checked.
type slotRecord struct {
	seq   uint64
	state *tracker.State
	hash  uint64
}

// parseRecord checks a slot's header, length and checksum, and returns its
// sequence number and payload.
func parseRecord(data []byte) (uint64, []byte, error) {
	line, rest, ok := bytes.Cut(data, []byte{'\n'})
	if !ok || len(line) > headerMax {
		return 0, nil, errors.New("no header line")
	}
	f := strings.Fields(string(line))
	if len(f) != 6 || f[0]+" "+f[1] != recordMagic {
		return 0, nil, fmt.Errorf("not a node state of this exporter (header %.60q)", line)
	}
	if f[2] != strconv.Itoa(Format) {
		return 0, nil, fmt.Errorf("format %s, want %d", f[2], Format)
	}
	var seq, length, sum uint64
	var err error
	for i, p := range []struct {
		name string
		dst  *uint64
		base int
	}{{"seq=", &seq, 10}, {"len=", &length, 10}, {"crc32c=", &sum, 16}} {
		v, ok := strings.CutPrefix(f[3+i], p.name)
		if !ok {
			return 0, nil, fmt.Errorf("header field %q, want %s", f[3+i], p.name)
		}
		if *p.dst, err = strconv.ParseUint(v, p.base, 64); err != nil {
			return 0, nil, fmt.Errorf("header field %q: %v", f[3+i], err)
		}
	}
	if seq == 0 {
		return 0, nil, errors.New("sequence number 0")
	}
	if length > uint64(len(rest)) {
		return 0, nil, fmt.Errorf("%d bytes of payload, the header says %d: a write cut short", len(rest), length)
	}
	body := rest[:length]
	if got := crc32.Checksum(body, castagnoli); uint64(got) != sum {
		return 0, nil, fmt.Errorf("checksum %08x, the header says %08x: a write cut short or a damaged file", got, sum)
	}
	if len(bytes.TrimSpace(rest[length:])) != 0 {
		return 0, nil, errors.New("data after the record")
	}
	return seq, body, nil
}

// decodePayload decodes a checked payload and checks it is key's.
func decodePayload(body []byte, key string) (*tracker.State, error) {
	var p payload
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("decoding the state: %w", err)
	}
	if p.Key != key {
		return nil, fmt.Errorf("the file holds node %q, the manifest says %q", p.Key, key)
	}
	if p.State == nil {
		return nil, errors.New("no state in the file")
	}
	return p.State, nil
}

// readSlot reads a slot file: its size (0 and no error when it does not
// exist) and its content.
func readSlot(path string) ([]byte, int, error) {
	data, ok, err := readBounded(path, maxNodeBytes)
	if err != nil || !ok {
		return nil, 0, err
	}
	return data, len(data), nil
}

// loadNode reads both slots of a node and returns the newest that passes
// every check. A slot that fails them is the one a crash cut short (or a
// damaged one): the other is used. Sizes are returned even when both fail,
// for the next writes.
func (s *Store) loadNode(key, stem string) (rec slotRecord, size [2]int, err error) {
	var errs []error
	found := false
	for slot := range 2 {
		path := slotPath(s.dir, stem, slot)
		data, n, rerr := readSlot(path)
		size[slot] = n
		switch {
		case rerr != nil:
			errs = append(errs, rerr)
			continue
		case n == 0:
			if _, serr := os.Stat(path); serr == nil {
				errs = append(errs, fmt.Errorf("%s: empty", path))
			}
			continue
		}
		found = true
		seq, body, perr := parseRecord(data)
		if perr == nil && seq > rec.seq {
			var st *tracker.State
			if st, perr = decodePayload(body, key); perr == nil {
				rec = slotRecord{seq: seq, state: st, hash: maphash.Bytes(s.seed, body)}
				continue
			}
		}
		if perr != nil {
			errs = append(errs, fmt.Errorf("%s: %w", path, perr))
		}
	}
	if rec.state != nil {
		return rec, size, nil
	}
	if !found && len(errs) == 0 {
		return rec, size, errors.New("listed in the manifest, but no file")
	}
	return rec, size, errors.Join(errs...)
}
