package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"

	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// A slot is one header line, then the payload (JSON: the node's key and
// state); what follows, up to the slot's end, is the tail of an older
// record or zeros:
//
//	indexima_exporter state 3 seq=41 len=5120 crc32c=1c2b3a4d
//	{"key":"/core-1:9999","state":{...}}
const (
	recordMagic = "indexima_exporter state"
	headerMax   = 128
	// maxSlotBytes bounds a slot: a node's state is a few kilobytes (the
	// known events of one late window); a manifest naming more is not
	// one of ours, and is not read into memory.
	maxSlotBytes = 16 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func appendRecord(dst []byte, seq uint64, payload []byte) []byte {
	dst = fmt.Appendf(dst, "%s %d seq=%d len=%d crc32c=%08x\n", recordMagic, Format, seq, len(payload), crc32.Checksum(payload, castagnoli))
	return append(dst, payload...)
}

// parseRecord checks a slot's header, length and checksum, and returns its
// sequence number, payload and the record's length.
func parseRecord(data []byte) (uint64, []byte, int, error) {
	if len(data) == 0 || data[0] == 0 {
		return 0, nil, 0, errEmptySlot
	}
	line, _, ok := bytes.Cut(data[:min(len(data), headerMax)], []byte{'\n'})
	if !ok {
		return 0, nil, 0, errors.New("no header line")
	}
	f := strings.Fields(string(line))
	if len(f) != 6 || f[0]+" "+f[1] != recordMagic {
		return 0, nil, 0, fmt.Errorf("not a node state of this exporter (header %.60q)", line)
	}
	if f[2] != strconv.Itoa(Format) {
		return 0, nil, 0, fmt.Errorf("format %s, want %d", f[2], Format)
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
			return 0, nil, 0, fmt.Errorf("header field %q, want %s", f[3+i], p.name)
		}
		if *p.dst, err = strconv.ParseUint(v, p.base, 64); err != nil {
			return 0, nil, 0, fmt.Errorf("header field %q: %v", f[3+i], err)
		}
	}
	if seq == 0 {
		return 0, nil, 0, errors.New("sequence number 0")
	}
	start := len(line) + 1
	if length > uint64(len(data)-start) {
		return 0, nil, 0, fmt.Errorf("%d bytes of room, the header says %d", len(data)-start, length)
	}
	body := data[start : start+int(length)]
	if got := crc32.Checksum(body, castagnoli); uint64(got) != sum {
		return 0, nil, 0, fmt.Errorf("checksum %08x, the header says %08x: a write cut short or damaged", got, sum)
	}
	return seq, body, start + int(length), nil
}

var errEmptySlot = errors.New("empty slot")

// newerState is a record or a manifest written by a newer version of the
// exporter: what this version does not know.
type newerState struct{ what string }

func (e *newerState) Error() string { return "written by a newer version (" + e.what + ")" }

// NewerError is a state store written by a newer version of the exporter
// (a manifest format, a node's state schema, or a field of a node's state,
// that this version does not know). Open refuses it, and changes nothing on disk: set aside
// or read with what this version knows, the state would lose the rest.
type NewerError struct {
	Path string // the manifest (--events.state-file)
	Node string // the node whose state is newer; "" for the manifest
	What string // what this version does not know
}

func (e *NewerError) Error() string {
	of := ""
	if e.Node != "" {
		of = fmt.Sprintf(" (node %s)", e.Node)
	}
	return fmt.Sprintf("state file %q%s was written by a newer version of the exporter (%s): run that version, "+
		"or move %s and its slot files %s.slots.* away to start every node from its first contact", e.Path, of, e.What, e.Path, e.Path)
}

// unknownField is the field of encoding/json's error for a field the
// decoder does not know (it has no type of its own).
func unknownField(err error) (string, bool) {
	return strings.CutPrefix(err.Error(), "json: unknown field ")
}

// decodePayload decodes a checked payload and checks it is key's. A state
// of a newer version (a schema above tracker.Schema, a field this version
// does not know) is a *newerState: read with what this version knows, it
// would lose the rest at the next write.
func decodePayload(body []byte, key string) (*tracker.State, error) {
	var p payload
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		if field, ok := unknownField(err); ok {
			return nil, &newerState{"a field this version does not know, " + field}
		}
		return nil, fmt.Errorf("decoding the state: %w", err)
	}
	if p.State != nil && p.State.Schema > tracker.Schema {
		return nil, &newerState{fmt.Sprintf("state schema %d; this version knows up to %d", p.State.Schema, tracker.Schema)}
	}
	if p.Key != key {
		return nil, fmt.Errorf("the slot holds node %q, the manifest says %q", p.Key, key)
	}
	if p.State == nil {
		return nil, errors.New("no state in the slot")
	}
	return p.State, nil
}

// newestRecord returns the newest of a region's two slots that passes every
// check: a slot that fails them is the one a crash cut short (or a damaged
// one), and the other is used. It returns the record (header included),
// its sequence number, its payload and its state.
func newestRecord(region []byte, size int, key string) (rec []byte, seq uint64, body []byte, st *tracker.State, err error) {
	var errs []error
	for slot := range 2 {
		lo := slot * size
		if lo >= len(region) {
			errs = append(errs, fmt.Errorf("slot %d: beyond the end of the file", slot))
			continue
		}
		data := region[lo:min(lo+size, len(region))]
		q, b, n, perr := parseRecord(data)
		if perr == nil {
			var s *tracker.State
			if s, perr = decodePayload(b, key); perr == nil && q > seq {
				rec, seq, body, st = data[:n], q, b, s
				continue
			}
			var newer *newerState
			if errors.As(perr, &newer) {
				// Whichever slot: the node was written by a newer
				// version, and so is, or will be, its newest state.
				return nil, 0, nil, nil, perr
			}
		}
		if perr != nil && perr != errEmptySlot {
			errs = append(errs, fmt.Errorf("slot %d: %w", slot, perr))
		}
	}
	if st != nil {
		return rec, seq, body, st, nil
	}
	if len(errs) == 0 {
		return nil, 0, nil, nil, errors.New("no state written in its region")
	}
	return nil, 0, nil, nil, errors.Join(errs...)
}
