package tracker

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/indexima-exporter/indexima_exporter/tally"
)

// AppendJSON appends the state's JSON to dst: the very bytes a
// json.Encoder with SetEscapeHTML(false) writes (without its newline),
// which TestAppendJSONIsEncodingJSON checks field by field on states
// with every field set. The state store writes a node's state at every
// scrape that moved it, before the answer goes out; encoding/json's
// reflection, map sorting and allocations made that write the store's
// largest CPU cost (docs/state.md, docs/performance.md). The state is read back with
// encoding/json, as before.
func (st *State) AppendJSON(dst []byte) ([]byte, error) {
	if st.Legacy != nil {
		// A format-1 dedup set not yet repaired: never a committed state
		// of this version, and not worth a path of its own.
		return appendEncodingJSON(dst, st)
	}
	e := encoders.Get().(*stateEncoder)
	defer encoders.Put(e)
	e.err = nil
	dst = e.state(dst, st)
	return dst, e.err
}

// stateEncoder holds the scratch space of one encoding.
type stateEncoder struct {
	keys    []string
	scratch []byte
	err     error
}

var encoders = sync.Pool{New: func() any { return new(stateEncoder) }}

func (e *stateEncoder) state(b []byte, st *State) []byte {
	b = append(b, '{')
	if st.Schema != 0 {
		b = appendInt(b, `"schema":`, int64(st.Schema))
		b = append(b, ',')
	}
	b = append(b, `"contacted":`...)
	b = strconv.AppendBool(b, st.Contacted)
	b = appendIntOmitEmpty(b, `,"since":`, st.Since)
	b = appendInt(b, `,"cursor":`, st.Cursor)
	b = appendIntOmitEmpty(b, `,"newest":`, st.Newest)
	b = appendIntOmitEmpty(b, `,"clock_at":`, st.ClockAt)
	b = appendInt(b, `,"floor":`, st.Floor)
	b = appendInt(b, `,"origin":`, st.Origin)
	b = append(b, `,"known":`...)
	b = e.known(b, &st.Known)
	b = append(b, `,"pending":`...)
	b = appendMap(e, b, st.Pending, appendPending)
	b = append(b, `,"unread":{"from":`...)
	b = strconv.AppendInt(b, st.Unread.From, 10)
	b = appendInt(b, `,"to":`, st.Unread.To)
	b = appendBool(b, `,"set":`, st.Unread.Set)
	b = append(b, '}')
	b = appendIntOmitEmpty(b, `,"page_cap":`, int64(st.PageCap))
	b = appendIntOmitEmpty(b, `,"list_cap":`, int64(st.ListCap))
	b = appendTrue(b, `,"list_cut":true`, st.ListCut)
	b = appendIntOmitEmpty(b, `,"cut_from":`, st.CutFrom)
	b = appendIntOmitEmpty(b, `,"deferred":`, st.Deferred)
	b = appendTrue(b, `,"no_defer":true`, st.NoDefer)
	b = appendBounds(b, st.Bounds)
	b = appendRetention(b, st.Retention)
	if len(st.Abandoned) > 0 {
		b = append(b, `,"abandoned":`...)
		b = appendMap(e, b, st.Abandoned, appendPending)
	}
	if len(st.Unreadable) > 0 {
		b = append(b, `,"unreadable":`...)
		b = e.unreadable(b, st.Unreadable)
	}
	b = appendLateness(b, &st.Lateness)
	b = appendSemantics(b, st.Semantics)
	b = appendCheck(b, st.Check)
	b = appendFutile(b, st.Futile)
	b = appendTrue(b, `,"relearn_node_down":true`, st.RelearnNodeDown)
	return e.tally(b, &st.Tally)
}

// tally appends the tally's fields, promoted into the state's object, and
// closes it.
func (e *stateEncoder) tally(b []byte, t *tally.Tally) []byte {
	b = append(b, `,"events":`...)
	b = appendMap(e, b, t.Events, appendUint)
	b = append(b, `,"durations":`...)
	b = appendMap(e, b, t.Durations, e.histogram)
	b = appendUintField(b, `,"reported":`, t.Reported)
	b = append(b, `,"node_down":`...)
	b = appendMap(e, b, t.NodeDown, appendUint)
	b = appendUintField(b, `,"metadata_upgraded":`, t.MetadataUpgraded)
	b = append(b, `,"dropped":`...)
	b = appendMap(e, b, t.Dropped, appendUint)
	if t.CursorRepairs != 0 {
		b = appendUintField(b, `,"cursor_repairs":`, t.CursorRepairs)
	}
	b = append(b, `,"running":`...)
	b = appendMap(e, b, t.Running, func(b []byte, v int) []byte { return strconv.AppendInt(b, int64(v), 10) })
	b = append(b, `,"last_date":`...)
	b = appendMap(e, b, t.LastDate, appendInt64)
	if len(t.NodeDownLast) > 0 {
		b = append(b, `,"node_down_last":`...)
		b = appendMap(e, b, t.NodeDownLast, appendInt64)
	}
	b = append(b, `,"phase":{"value":`...)
	b = appendString(b, t.Phase.Value)
	b = appendInt(b, `,"date":`, t.Phase.Date)
	b = append(b, '}')
	b = append(b, `,"indexes":`...)
	b = appendMap(e, b, t.Indexes, func(b []byte, v tally.IndexState) []byte {
		b = appendBool(b, `{"loaded":`, v.Loaded)
		b = appendInt(b, `,"date":`, v.Date)
		return append(b, '}')
	})
	b = append(b, `,"tables":`...)
	b = appendMap(e, b, t.Tables, appendInt64)
	b = appendInt(b, `,"tables_cleared_at":`, t.TablesClearedAt)
	b = appendInt(b, `,"preload":{"value":`, t.Preload.Value)
	b = appendInt(b, `,"date":`, t.Preload.Date)
	b = appendBool(b, `,"known":`, t.Preload.Known)
	b = append(b, '}')
	b = append(b, `,"unknown_types":`...)
	b = appendMap(e, b, t.UnknownTypes, strconv.AppendBool)
	return append(b, '}')
}

// known appends the known events as known.MarshalJSON does: base64 of
// varints, without its allocations.
func (e *stateEncoder) known(b []byte, k *known) []byte {
	e.scratch = e.scratch[:0]
	var prev int64
	for _, en := range k.entries {
		e.scratch = binary.AppendVarint(e.scratch, en.date-prev)
		e.scratch = binary.AppendUvarint(e.scratch, en.fp)
		prev = en.date
	}
	b = append(b, `{"entries":"`...)
	b = base64.StdEncoding.AppendEncode(b, e.scratch)
	b = append(b, '"')
	if len(k.baseline) > 0 {
		e.scratch = e.scratch[:0]
		prev = 0
		for _, d := range k.baseline {
			e.scratch = binary.AppendVarint(e.scratch, d-prev)
			prev = d
		}
		b = append(b, `,"baseline":"`...)
		b = base64.StdEncoding.AppendEncode(b, e.scratch)
		b = append(b, '"')
	}
	return append(b, '}')
}

func (e *stateEncoder) histogram(b []byte, h *tally.Histogram) []byte {
	if h == nil {
		return append(b, "null"...)
	}
	b = append(b, '{')
	if len(h.Bounds) > 0 {
		b = append(b, `"bounds":[`...)
		for i, f := range h.Bounds {
			if i > 0 {
				b = append(b, ',')
			}
			b = e.float(b, f)
		}
		b = append(b, "],"...)
	}
	b = append(b, `"buckets":`...)
	if h.Buckets == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, n := range h.Buckets {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendUint(b, n, 10)
		}
		b = append(b, ']')
	}
	b = appendUintField(b, `,"count":`, h.Count)
	b = append(b, `,"sum":`...)
	b = e.float(b, h.Sum)
	return append(b, '}')
}

// float appends f as encoding/json does; NaN and infinities are an error
// there and here.
func (e *stateEncoder) float(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		if e.err == nil {
			e.err = fmt.Errorf("json: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, 64))
		}
		return append(b, '0')
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 to e-9, as encoding/json writes it.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// unreadable appends a map keyed by dates: encoding/json writes the keys
// as strings, sorted as strings.
func (e *stateEncoder) unreadable(b []byte, m map[int64]Unread) []byte {
	e.keys = e.keys[:0]
	for d := range m {
		e.keys = append(e.keys, strconv.FormatInt(d, 10))
	}
	slices.Sort(e.keys)
	b = append(b, '{')
	for i, k := range e.keys {
		if i > 0 {
			b = append(b, ',')
		}
		d, _ := strconv.ParseInt(k, 10, 64)
		u := m[d]
		b = append(b, '"')
		b = append(b, k...)
		b = appendInt(b, `":{"events":`, u.Events)
		b = appendInt(b, `,"known":`, u.Known)
		b = appendTrue(b, `,"baseline":true`, u.Baseline)
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendMap appends a map with string keys, sorted, as encoding/json does
// (null when nil).
func appendMap[V any](e *stateEncoder, b []byte, m map[string]V, value func([]byte, V) []byte) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	e.keys = e.keys[:0]
	for k := range m {
		e.keys = append(e.keys, k)
	}
	slices.Sort(e.keys)
	b = append(b, '{')
	for i, k := range e.keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = value(b, m[k])
	}
	return append(b, '}')
}

func appendPending(b []byte, p PendingEvent) []byte {
	b = append(b, `{"type":`...)
	b = appendString(b, p.Type)
	b = appendInt(b, `,"date":`, p.Date)
	b = append(b, `,"comment":`...)
	b = appendString(b, p.Comment)
	b = appendInt(b, `,"n":`, int64(p.N))
	b = appendInt(b, `,"misses":`, int64(p.Misses))
	return append(b, '}')
}

func appendBounds(b []byte, v Bounds) []byte {
	b = appendBool(b, `,"bounds":{"known":`, v.Known)
	b = appendTrue(b, `,"start_exclusive":true`, v.StartExclusive)
	b = appendTrue(b, `,"end_exclusive":true`, v.EndExclusive)
	b = appendTrue(b, `,"since_inclusive":true`, v.SinceInclusive)
	return append(b, '}')
}

func appendRetention(b []byte, r Retention) []byte {
	b = appendBool(b, `,"retention":{"seen":`, r.Seen)
	b = appendIntOmitEmpty(b, `,"age_ms":`, r.AgeMS)
	b = appendIntOmitEmpty(b, `,"keep":`, r.Keep)
	b = appendTrue(b, `,"by_number":true`, r.ByNumber)
	b = appendIntOmitEmpty(b, `,"step_ms":`, r.StepMS)
	b = appendIntOmitEmpty(b, `,"per_poll":`, r.PerPoll)
	b = appendIntOmitEmpty(b, `,"wait":`, int64(r.Wait))
	b = appendIntOmitEmpty(b, `,"below":`, int64(r.Below))
	b = appendIntOmitEmpty(b, `,"polls":`, int64(r.Polls))
	return append(b, '}')
}

func appendLateness(b []byte, l *Lateness) []byte {
	b = append(b, `,"lateness":{"need":`...)
	b = appendSlots(b, &l.Need)
	b = append(b, `,"lag":`...)
	b = appendSlots(b, &l.Lag)
	b = appendInt(b, `,"lag_ms":`, l.LagMS)
	b = appendBool(b, `,"lag_known":`, l.LagKnown)
	b = appendClockEvidence(b, &l.Clock)
	b = append(b, `,"dur":`...)
	b = appendSlots(b, &l.Dur)
	return append(b, '}')
}

func appendClockEvidence(b []byte, c *clockEvidence) []byte {
	b = append(b, `,"clock":{"above":`...)
	b = appendSlots(b, &c.Above)
	d := c.Doubt
	b = appendInt(b, `,"doubt":{"lo":`, d.Lo)
	b = appendInt(b, `,"hi":`, d.Hi)
	b = appendBool(b, `,"lo_set":`, d.LoSet)
	b = appendBool(b, `,"hi_set":`, d.HiSet)
	b = appendInt(b, `,"since":`, d.Since)
	b = appendInt(b, `},"listed":{"at":`, c.Listed.At)
	b = appendInt(b, `,"from":`, c.Listed.From)
	b = appendBool(b, `,"set":`, c.Listed.Set)
	return append(b, "}}"...)
}

func appendSlots(b []byte, s *[lateSlots]slotValue) []byte {
	b = append(b, '[')
	for i, v := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendInt(b, `{"slot":`, v.Slot)
		b = appendInt(b, `,"v":`, v.V)
		b = appendBool(b, `,"set":`, v.Set)
		b = append(b, '}')
	}
	return append(b, ']')
}

func appendSemantics(b []byte, s Semantics) []byte {
	b = appendInt(b, `,"semantics":{"score":`, int64(s.Score))
	b = append(b, `,"mode":`...)
	b = appendString(b, string(s.Mode))
	b = appendTrue(b, `,"unlisted":true`, s.Unlisted)
	b = appendIntOmitEmpty(b, `,"unlisted_score":`, int64(s.UnlistedScore))
	b = appendIntOmitEmpty(b, `,"runnings_at":`, s.RunningsAt)
	return append(b, '}')
}

func appendCheck(b []byte, c SelfCheck) []byte {
	b = appendInt(b, `,"check":{"sealed":`, c.Sealed)
	b = appendInt(b, `,"baseline_sealed":`, c.BaselineSealed)
	b = appendInt(b, `,"outside":`, c.Outside)
	b = appendInt(b, `,"last_full":`, c.LastFull)
	b = appendInt(b, `,"missed":`, c.Missed)
	b = appendIntOmitEmpty(b, `,"abandoned_sealed":`, c.AbandonedSealed)
	return append(b, '}')
}

func appendFutile(b []byte, f Futile) []byte {
	b = appendInt(b, `,"futile":{"deficit":`, f.Deficit)
	b = appendInt(b, `,"beyond":`, f.Beyond)
	b = appendInt(b, `,"streak":`, int64(f.Streak))
	b = appendInt(b, `,"skip":`, int64(f.Skip))
	b = append(b, `,"mode":`...)
	b = appendString(b, string(f.Mode))
	return append(b, '}')
}

func appendInt(b []byte, name string, v int64) []byte {
	return strconv.AppendInt(append(b, name...), v, 10)
}

func appendUintField(b []byte, name string, v uint64) []byte {
	return strconv.AppendUint(append(b, name...), v, 10)
}

func appendUint(b []byte, v uint64) []byte { return strconv.AppendUint(b, v, 10) }

func appendInt64(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) }

// appendIntOmitEmpty and appendTrue write a field tagged omitempty: not at
// all when it is zero.
func appendIntOmitEmpty(b []byte, name string, v int64) []byte {
	if v == 0 {
		return b
	}
	return appendInt(b, name, v)
}

func appendTrue(b []byte, field string, v bool) []byte {
	if !v {
		return b
	}
	return append(b, field...)
}

func appendBool(b []byte, name string, v bool) []byte {
	return strconv.AppendBool(append(b, name...), v)
}

// appendString appends s as a JSON string. Printable ASCII without quotes
// or backslashes (event types, node and table names) is written as is;
// anything else is left to encoding/json, whose escapes it must match.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			out, _ := appendEncodingJSON(b, s) // a string always encodes
			return out
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendEncodingJSON appends v as a json.Encoder with SetEscapeHTML(false)
// writes it, without its newline.
func appendEncodingJSON(b []byte, v any) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return b, err
	}
	out := buf.Bytes()
	return out[:len(out)-1], nil
}
