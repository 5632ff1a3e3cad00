package eventlog

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/indexima-exporter/indexima_exporter/poller"
	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// appendLine appends the line of an event, and its newline, to dst: the
// bytes encoding/json writes for LineOf's Line (HTML left unescaped), which
// the fuzz test checks, without the reflection, the ID's hasher and the
// strings of a Line. scratch is reused for the ID's input. The log writes
// a line per counted event; encoding/json cost it more than the budget
// the exporter allows it (docs/events.md, Cost).
func appendLine(dst, scratch []byte, n poller.NodeRef, c tracker.Counted, names DownNodeNamer) (line, scratchOut []byte) {
	scratch = idInput(scratch[:0], n, c)
	sum := sha256.Sum256(scratch)
	dst = append(dst, `{"id":"`...)
	dst = hex.AppendEncode(dst, sum[:16])
	dst = append(dst, `","cluster":`...)
	dst = appendString(dst, n.Cluster)
	dst = append(dst, `,"node":`...)
	dst = appendString(dst, n.Name)
	dst = append(dst, `,"target":`...)
	dst = appendString(dst, n.Target)
	dst = append(dst, `,"type":`...)
	dst = appendString(dst, c.Type)
	dst = append(dst, `,"date":"`...)
	dst = time.UnixMilli(c.Date).UTC().AppendFormat(dst, dateLayout)
	dst = append(dst, `","date_ms":`...)
	dst = strconv.AppendInt(dst, c.Date, 10)
	dst = append(dst, `,"duration_ms":`...)
	if c.HasDuration {
		dst = strconv.AppendInt(dst, c.Duration, 10)
	} else {
		dst = append(dst, "null"...)
	}
	comment := cut(c.Comment, MaxComment)
	dst = append(dst, `,"comment":`...)
	dst = appendString(dst, comment)
	if c.Type == "NODE_DOWN" {
		if comment != "" {
			dst = append(dst, `,"down_node":`...)
			dst = appendString(dst, comment)
		}
		if names != nil {
			if name, ok := names(n.Cluster, c.Comment); ok && name != "" {
				dst = append(dst, `,"down_node_name":`...)
				dst = appendString(dst, name)
			}
		}
	}
	return append(dst, "}\n"...), scratch
}

// idInput appends what ID hashes: each string length-prefixed, each
// number 8 bytes, so that no two events give the same input.
func idInput(b []byte, n poller.NodeRef, c tracker.Counted) []byte {
	field := func(s string) {
		b = binary.LittleEndian.AppendUint64(b, uint64(len(s)))
		b = append(b, s...)
	}
	number := func(v int64) { b = binary.LittleEndian.AppendUint64(b, uint64(v)) }
	field(n.Cluster)
	field(n.Target)
	field(c.Type)
	number(c.Date)
	if c.HasDuration {
		number(1)
		number(c.Duration)
	} else {
		number(0)
	}
	field(c.Comment)
	number(int64(c.Nth))
	return b
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string as encoding/json does without
// HTML escaping: quote and backslash escaped, control characters as \b, \f,
// \n, \r, \t or \u00XX, invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
