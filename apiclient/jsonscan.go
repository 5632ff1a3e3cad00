package apiclient

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// scanner is a small pull tokenizer over a bufio.Reader. It reads the
// reader's own buffer through Peek/Discard instead of copying it, so the hot
// path of the listing decoder (keys, type names, numbers) never allocates.
// Byte slices it returns are only valid until its next call.
type scanner struct {
	r       *bufio.Reader
	buf     []byte // bytes buffered in r, as returned by Peek
	pos     int    // next unread byte of buf
	off     int64  // stream offset of buf[0], for error messages
	err     error  // sticky read error; io.EOF at the end of the body
	scratch []byte // decoded strings that span a buffer boundary or hold escapes
}

// maxDepth bounds the nesting of skipped values, so a hostile body cannot
// exhaust the stack.
const maxDepth = 256

// syntaxError is a body that is not the JSON we expect. Read errors (size
// limit, gzip, timeout) are passed through unchanged instead, so that the
// caller can classify them.
type syntaxError struct {
	off int64
	msg string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s (at byte %d)", e.msg, e.off) }

func newScanner(r *bufio.Reader) *scanner { return &scanner{r: r} }

func (s *scanner) offset() int64 { return s.off + int64(s.pos) }

func (s *scanner) errorf(format string, args ...any) error {
	return &syntaxError{off: s.offset(), msg: fmt.Sprintf(format, args...)}
}

// fill makes at least one unread byte available; false at the end of the
// body or on a read error (kept in s.err).
func (s *scanner) fill() bool {
	if s.pos < len(s.buf) {
		return true
	}
	if s.pos > 0 {
		_, _ = s.r.Discard(s.pos)
		s.off += int64(s.pos)
		s.pos = 0
		s.buf = nil
	}
	if s.err != nil {
		return false
	}
	if _, err := s.r.Peek(1); err != nil {
		s.err = err
		return false
	}
	s.buf, _ = s.r.Peek(s.r.Buffered())
	return true
}

// release hands the consumed bytes back to the bufio.Reader.
func (s *scanner) release() {
	if s.pos > 0 {
		_, _ = s.r.Discard(s.pos)
		s.off += int64(s.pos)
		s.buf = s.buf[s.pos:]
		s.pos = 0
	}
}

// eofError turns the end of the input in the middle of a value into a
// syntax error, and passes any other read error through.
func (s *scanner) eofError(what string) error {
	if s.err == nil || errors.Is(s.err, io.EOF) {
		return &syntaxError{off: s.offset(), msg: "body ends in the middle of " + what + " (truncated answer)"}
	}
	return s.err
}

// peek skips white space and returns the next byte without consuming it.
func (s *scanner) peek(what string) (byte, error) {
	for {
		for s.pos < len(s.buf) {
			c := s.buf[s.pos]
			if c != ' ' && c != '\n' && c != '\r' && c != '\t' {
				return c, nil
			}
			s.pos++
		}
		if !s.fill() {
			return 0, s.eofError(what)
		}
	}
}

// expect consumes the next non-space byte, which must be c.
func (s *scanner) expect(c byte, what string) error {
	got, err := s.peek(what)
	if err != nil {
		return err
	}
	if got != c {
		return s.errorf("expected %q in %s, found %s", c, what, quoteByte(got))
	}
	s.pos++
	return nil
}

// atEnd reports whether only white space remains.
func (s *scanner) atEnd() (bool, error) {
	_, err := s.peek("")
	if err == nil {
		return false, nil
	}
	var se *syntaxError
	if errors.As(err, &se) {
		return true, nil
	}
	return false, err
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("'%c'", c)
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

// str reads a string whose opening quote is the next non-space byte and
// returns its decoded bytes (valid until the next scanner call).
func (s *scanner) str(what string) ([]byte, error) {
	if err := s.expect('"', what); err != nil {
		return nil, err
	}
	return s.strBody(what)
}

// strBody reads the rest of a string after its opening quote.
func (s *scanner) strBody(what string) ([]byte, error) {
	start := s.pos
	for i := start; i < len(s.buf); i++ {
		c := s.buf[i]
		if c == '"' {
			s.pos = i + 1
			return s.buf[start:i], nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
	}
	return s.strSlow(what)
}

// strSlow decodes escapes and strings that cross the end of the buffer.
func (s *scanner) strSlow(what string) ([]byte, error) {
	out := s.scratch[:0]
	for {
		// Copy the run of plain bytes in one go.
		i := s.pos
		for i < len(s.buf) {
			c := s.buf[i]
			if c == '"' || c == '\\' || c < 0x20 {
				break
			}
			i++
		}
		out = append(out, s.buf[s.pos:i]...)
		s.pos = i
		if s.pos == len(s.buf) {
			if !s.fill() {
				s.scratch = out
				return nil, s.eofError(what)
			}
			continue
		}
		c := s.buf[s.pos]
		s.pos++
		switch {
		case c == '"':
			s.scratch = out
			return out, nil
		case c < 0x20:
			s.scratch = out
			return nil, s.errorf("control character 0x%02x inside %s", c, what)
		}
		// Escape sequence.
		e, ok := s.byte()
		if !ok {
			s.scratch = out
			return nil, s.eofError(what)
		}
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, err := s.hex4(what)
			if err != nil {
				s.scratch = out
				return nil, err
			}
			if utf16.IsSurrogate(r) {
				r = s.lowSurrogate(r)
			}
			out = utf8.AppendRune(out, r)
		default:
			s.scratch = out
			return nil, s.errorf("invalid escape %s inside %s", quoteByte(e), what)
		}
	}
}

// lowSurrogate completes a UTF-16 surrogate pair when the next escape is its
// second half; a lone surrogate becomes U+FFFD, as encoding/json does.
func (s *scanner) lowSurrogate(hi rune) rune {
	if len(s.buf)-s.pos < 6 {
		// Look ahead six bytes without consuming them.
		s.release()
		_, err := s.r.Peek(6)
		s.buf, _ = s.r.Peek(s.r.Buffered())
		if err != nil {
			return utf8.RuneError
		}
	}
	b := s.buf[s.pos : s.pos+6]
	if b[0] != '\\' || b[1] != 'u' {
		return utf8.RuneError
	}
	lo, ok := parseHex4(b[2:])
	if !ok {
		return utf8.RuneError
	}
	r := utf16.DecodeRune(hi, lo)
	if r == utf8.RuneError {
		return r
	}
	s.pos += 6
	return r
}

func (s *scanner) byte() (byte, bool) {
	if !s.fill() {
		return 0, false
	}
	c := s.buf[s.pos]
	s.pos++
	return c, true
}

func (s *scanner) hex4(what string) (rune, error) {
	var b [4]byte
	for i := range b {
		c, ok := s.byte()
		if !ok {
			return 0, s.eofError(what)
		}
		b[i] = c
	}
	r, ok := parseHex4(b[:])
	if !ok {
		return 0, s.errorf("invalid \\u escape inside %s", what)
	}
	return r, nil
}

func parseHex4(b []byte) (rune, bool) {
	var r rune
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// numberToken reads the bytes of a JSON number (valid until the next call).
func (s *scanner) numberToken(what string) ([]byte, error) {
	start := s.pos
	for i := start; i < len(s.buf); i++ {
		if !isNumberByte(s.buf[i]) {
			s.pos = i
			return s.buf[start:i], nil
		}
	}
	// The number reaches the end of the buffer: continue in scratch.
	// scratch's array is reused from call to call (kept in s.scratch below).
	out := s.scratch[:0]
	out = append(out, s.buf[start:]...)
	s.pos = len(s.buf)
	for s.fill() {
		c := s.buf[s.pos]
		if !isNumberByte(c) {
			break
		}
		if len(out) > 64 {
			return nil, s.errorf("number too long in %s", what)
		}
		out = append(out, c)
		s.pos++
	}
	s.scratch = out
	if s.err != nil && !errors.Is(s.err, io.EOF) {
		return nil, s.err
	}
	return out, nil
}

func isNumberByte(c byte) bool {
	return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// intToken parses a number token as an int64. Floats with a zero fraction
// (1.5e12, 36.0) are accepted because some JSON serialisers write longs so.
func intToken(b []byte) (int64, bool) {
	if n := len(b); n > 0 && n <= 18 {
		var v int64
		neg := b[0] == '-'
		i := 0
		if neg {
			i = 1
		}
		if i < n {
			for ; i < n; i++ {
				c := b[i]
				if c < '0' || c > '9' {
					goto slow
				}
				v = v*10 + int64(c-'0')
			}
			if neg {
				v = -v
			}
			return v, true
		}
	}
slow:
	if v, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		return v, true
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || f != math.Trunc(f) || f >= math.MaxInt64 || f < math.MinInt64 {
		return 0, false
	}
	return int64(f), true
}

// intValue reads a timestamp or duration: a JSON number, a string holding
// one (or an RFC 3339 date), or null. present is false for null and "".
func (s *scanner) intValue(what string) (v int64, present bool, err error) {
	c, err := s.peek(what)
	if err != nil {
		return 0, false, err
	}
	switch {
	case c == 'n':
		return 0, false, s.literal("null", what)
	case c == '"':
		b, err := s.str(what)
		if err != nil {
			return 0, false, err
		}
		t := strings.TrimSpace(string(b))
		if t == "" {
			return 0, false, nil
		}
		if v, ok := intToken([]byte(t)); ok {
			return v, true, nil
		}
		if ts, err := time.Parse(time.RFC3339Nano, t); err == nil {
			return ts.UnixMilli(), true, nil
		}
		return 0, false, s.errorf("%s is not a number: %q", what, truncate(t, 40))
	case c == '-' || (c >= '0' && c <= '9'):
		b, err := s.numberToken(what)
		if err != nil {
			return 0, false, err
		}
		v, ok := intToken(b)
		if !ok {
			return 0, false, s.errorf("%s is not an integer: %s", what, truncate(string(b), 40))
		}
		return v, true, nil
	}
	return 0, false, s.errorf("%s is not a number (found %s)", what, quoteByte(c))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// literal consumes true, false or null.
func (s *scanner) literal(word, what string) error {
	for i := 0; i < len(word); i++ {
		c, ok := s.byte()
		if !ok {
			return s.eofError(what)
		}
		if c != word[i] {
			return s.errorf("invalid literal in %s (expected %s)", what, word)
		}
	}
	return nil
}

// skip consumes any JSON value, checking its syntax.
func (s *scanner) skip(what string, depth int) error {
	if depth > maxDepth {
		return s.errorf("%s is nested too deeply", what)
	}
	c, err := s.peek(what)
	if err != nil {
		return err
	}
	switch {
	case c == '"':
		s.pos++
		_, err := s.strBody(what)
		return err
	case c == '{':
		s.pos++
		return s.skipContainer('}', what, depth, true)
	case c == '[':
		s.pos++
		return s.skipContainer(']', what, depth, false)
	case c == 't':
		return s.literal("true", what)
	case c == 'f':
		return s.literal("false", what)
	case c == 'n':
		return s.literal("null", what)
	case c == '-' || (c >= '0' && c <= '9'):
		b, err := s.numberToken(what)
		if err != nil {
			return err
		}
		if _, err := strconv.ParseFloat(string(b), 64); err != nil && !isRangeError(err) {
			return s.errorf("invalid number %s in %s", truncate(string(b), 40), what)
		}
		return nil
	}
	return s.errorf("unexpected %s in %s", quoteByte(c), what)
}

func isRangeError(err error) bool {
	var ne *strconv.NumError
	return errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange)
}

func (s *scanner) skipContainer(end byte, what string, depth int, object bool) error {
	c, err := s.peek(what)
	if err != nil {
		return err
	}
	if c == end {
		s.pos++
		return nil
	}
	for {
		if object {
			if _, err := s.str(what); err != nil {
				return err
			}
			if err := s.expect(':', what); err != nil {
				return err
			}
		}
		if err := s.skip(what, depth+1); err != nil {
			return err
		}
		c, err := s.peek(what)
		if err != nil {
			return err
		}
		s.pos++
		if c == end {
			return nil
		}
		if c != ',' {
			return s.errorf("expected ',' or %q in %s, found %s", end, what, quoteByte(c))
		}
	}
}
