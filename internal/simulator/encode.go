package simulator

import (
	"strconv"
	"unicode/utf8"
)

// Listings are encoded by hand: benchmarks ask for tens of thousands of
// events per answer across hundreds of nodes, and reflection-based encoding
// would make the simulator, not the exporter, the bottleneck.

// appendListing appends {"reqs":[...],"runnings":[...],"last":N}, without
// the runnings field when withRunnings is false (Readings.Runnings absent).
func appendListing(b []byte, reqs, runnings []Event, last int64, withRunnings, pretty bool) []byte {
	nl, ind := "", ""
	if pretty {
		nl, ind = "\n", "  "
	}
	b = append(b, '{')
	b = append(b, nl...)
	b = append(b, ind...)
	b = append(b, `"reqs":[`...)
	for i := range reqs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, nl...)
		b = append(b, ind...)
		b = append(b, ind...)
		b = appendEvent(b, &reqs[i], true)
	}
	b = append(b, `],`...)
	if withRunnings {
		b = append(b, nl...)
		b = append(b, ind...)
		b = append(b, `"runnings":[`...)
		for i := range runnings {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, nl...)
			b = append(b, ind...)
			b = append(b, ind...)
			b = appendEvent(b, &runnings[i], false)
		}
		b = append(b, `],`...)
	}
	b = append(b, nl...)
	b = append(b, ind...)
	b = append(b, `"last":`...)
	b = strconv.AppendInt(b, last, 10)
	b = append(b, nl...)
	b = append(b, '}')
	return b
}

// appendEvent appends one event; a running event has no duration yet.
func appendEvent(b []byte, ev *Event, withDuration bool) []byte {
	b = append(b, `{"type":`...)
	b = appendJSONString(b, ev.Type)
	b = append(b, `,"date":`...)
	b = strconv.AppendInt(b, ev.Date, 10)
	if withDuration {
		b = append(b, `,"duration":`...)
		b = strconv.AppendInt(b, ev.Duration, 10)
	}
	b = append(b, `,"comment":`...)
	b = appendJSONString(b, ev.Comment)
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string literal.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, `\u202`...)
			b = append(b, hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendMessage appends {"message":"..."}.
func appendMessage(b []byte, msg string) []byte {
	b = append(b, `{"message":`...)
	b = appendJSONString(b, msg)
	return append(b, '}')
}
