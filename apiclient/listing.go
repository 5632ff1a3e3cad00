package apiclient

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Known event types (spec section 6). The decoder returns these constants
// instead of allocating a string per event.
var knownTypes = [...]string{"CLUSTER_START", "CLUSTER_STOP", "NODE_DOWN", "CLUSTER_INIT",
	"MEMORY_LOW", "TABLE_LOADED", "HYPER_INDEX_LOADED", "HYPER_INDEX_UNLOADED",
	"SAVE_METADATA", "PRELOAD_FINISHED"}

// maxInternedTypes bounds the cache of unknown type names, so a hostile body
// cannot grow it without end; past it, unknown names are allocated per event.
const maxInternedTypes = 64

// maxMessageBytes bounds the "message" text kept from an error body.
const maxMessageBytes = 256

// handlerError marks an error returned by the caller's ListingHandler: it is
// handed back unchanged, never classified.
type handlerError struct{ err error }

func (e *handlerError) Error() string { return e.err.Error() }
func (e *handlerError) Unwrap() error { return e.err }

// messageBody is a 2xx answer that is a {"message": ...} object instead of
// the endpoint's data: the console's way of refusing an unauthenticated call.
type messageBody struct{ message string }

func (e *messageBody) Error() string {
	return fmt.Sprintf("the console answered a message instead of data: %q", e.message)
}

// listingDecoder hands the events of a listing to a ListingHandler while
// jsontext reads the body: keys, type names and numbers are read in the
// decoder's buffer, so an event costs an allocation only for its comment.
type listingDecoder struct {
	*jsonDecoder
	h       ListingHandler
	info    ListingInfo
	unknown map[string]string // interned unknown type names
}

// decodeListing decodes an event listing from r, handing each event to h.
// Errors: *syntaxError (not a listing), *messageBody, *handlerError, or the
// read error of r (size limit, gzip, timeout).
func decodeListing(r io.Reader, h ListingHandler) (ListingInfo, error) {
	ld := listingDecoder{jsonDecoder: getDecoder(r), h: h}
	err := ld.fail(ld.decode(), "the listing")
	ld.release()
	return ld.info, err
}

func (ld *listingDecoder) decode() error {
	if err := ld.object("the listing"); err != nil {
		return err
	}
	var sawListing, sawMessage bool
	var message string
	for ld.PeekKind() != '}' {
		key, err := ld.str()
		if err != nil {
			return err
		}
		switch string(key) {
		case "reqs":
			sawListing = true
			err = ld.events("reqs", false, &ld.info.Reqs)
		case "runnings":
			sawListing = true
			err = ld.events("runnings", true, &ld.info.Runnings)
		case "last":
			sawListing = true
			ld.info.Last, ld.info.HasLast, err = ld.intValue(`"last"`)
		case "message":
			sawMessage = true
			message, err = ld.messageValue()
		default:
			err = ld.skip("an unknown field of the listing")
		}
		if err != nil {
			return err
		}
	}
	if _, err := ld.ReadToken(); err != nil {
		return err
	}
	if err := ld.atEnd("the listing"); err != nil {
		return err
	}
	if !sawListing {
		if sawMessage {
			return &messageBody{message: message}
		}
		return ld.errorf(`the answer has none of the listing fields "reqs", "runnings", "last"`)
	}
	return nil
}

// messageValue keeps a bounded, sanitised copy of a "message" value.
func (ld *listingDecoder) messageValue() (string, error) {
	if ld.PeekKind() != '"' {
		return "", ld.skip(`"message"`)
	}
	b, err := ld.str()
	if err != nil {
		return "", err
	}
	return sanitize(b, maxMessageBytes), nil
}

// events decodes one array of events (null is an empty array).
func (ld *listingDecoder) events(name string, running bool, n *int) error {
	switch ld.PeekKind() {
	case 'n':
		_, err := ld.ReadToken()
		return err
	case '[':
	default:
		return ld.notA("%q is not an array", name)
	}
	if _, err := ld.ReadToken(); err != nil {
		return err
	}
	for {
		tok, err := ld.ReadToken()
		switch {
		case err != nil:
			return err
		case tok.Kind() == ']':
			return nil
		case tok.Kind() != '{':
			return ld.errorf("event %d of %q is not an object (it is %s)", *n, name, kindText(tok.Kind()))
		}
		ev, err := ld.event(name, *n)
		if err != nil {
			return err
		}
		if running {
			err = ld.h.Running(ev)
		} else {
			err = ld.h.Event(ev)
		}
		if err != nil {
			return &handlerError{err: err}
		}
		*n++
	}
}

// event decodes one event object after its '{'; fields may come in any
// order and unknown ones are skipped. Known fields are read as whole values
// (one jsontext call each): an odd value there is refused or ignored.
func (ld *listingDecoder) event(array string, index int) (Event, error) {
	var ev Event
	hasType := false
	for {
		// One ReadToken per name, which also meets the end of the object.
		// Names are matched without allocating (Token.String is inlined
		// into the switch).
		tok, err := ld.ReadToken()
		if err != nil {
			return ev, err
		}
		if tok.Kind() == '}' {
			break
		}
		switch tok.String() {
		case "type":
			v, err := ld.ReadValue()
			if err != nil {
				return ev, err
			}
			if v.Kind() != '"' {
				return ev, ld.errorf("event %d of %q: \"type\" is not a string (it is %s)", index, array, kindText(v.Kind()))
			}
			ev.Type, hasType = ld.intern(ld.text(v)), true
		case "date":
			ev.Date, _, err = ld.intValue(`"date"`)
		case "duration":
			ev.Duration, ev.HasDuration, err = ld.intValue(`"duration"`)
		case "comment":
			ev.Comment, err = ld.comment()
		default:
			err = ld.skip("an unknown field of an event")
		}
		if err != nil {
			return ev, err
		}
	}
	if !hasType {
		return ev, ld.errorf("event %d of %q has no \"type\"", index, array)
	}
	return ev, nil
}

// intValue reads a timestamp or duration: a JSON number, a string holding
// one (or an RFC 3339 date), or null. present is false for null and "".
func (ld *listingDecoder) intValue(what string) (v int64, present bool, err error) {
	b, err := ld.ReadValue()
	if err != nil {
		return 0, false, err
	}
	switch b.Kind() {
	case 'n':
		return 0, false, nil
	case '"':
		t := strings.TrimSpace(string(ld.text(b)))
		if t == "" {
			return 0, false, nil
		}
		if v, ok := intToken([]byte(t)); ok {
			return v, true, nil
		}
		if ts, err := time.Parse(time.RFC3339Nano, t); err == nil {
			return ts.UnixMilli(), true, nil
		}
		return 0, false, ld.errorf("%s is not a number: %q", what, truncate(t, 40))
	case '0':
		v, ok := intToken(b)
		if !ok {
			return 0, false, ld.errorf("%s is not an integer: %s", what, truncate(string(b), 40))
		}
		return v, true, nil
	}
	return 0, false, ld.errorf("%s is not a number (it is %s)", what, kindText(b.Kind()))
}

// intToken parses a number token as an int64. Floats with a zero fraction
// (1.5e12, 36.0) are accepted because some JSON serialisers write longs so.
func intToken(b []byte) (int64, bool) {
	if n := len(b); n > 0 && n <= 18 {
		v, neg, i := int64(0), b[0] == '-', 0
		if neg {
			i = 1
		}
		for ; i < n && b[i] >= '0' && b[i] <= '9'; i++ {
			v = v*10 + int64(b[i]-'0')
		}
		if i == n && (!neg || n > 1) {
			if neg {
				v = -v
			}
			return v, true
		}
	}
	if v, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		return v, true
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || f != math.Trunc(f) || f >= math.MaxInt64 || f < math.MinInt64 {
		return 0, false
	}
	return int64(f), true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// comment reads the comment: a string, or (tolerated) a number or boolean
// kept as its JSON text; null, objects and arrays give "".
func (ld *listingDecoder) comment() (string, error) {
	v, err := ld.ReadValue()
	switch {
	case err != nil:
		return "", err
	case v.Kind() == '"':
		if b := ld.text(v); len(b) > 0 {
			return validString(b), nil
		}
	case v.Kind() == '0' || v.Kind() == 't' || v.Kind() == 'f':
		return string(v), nil
	}
	return "", nil
}

// intern returns a constant string for the known type names and a cached one
// for a few unknown names, so that decoding allocates only for comments.
func (ld *listingDecoder) intern(b []byte) string {
	for _, t := range knownTypes {
		if string(b) == t {
			return t
		}
	}
	if s, ok := ld.unknown[string(b)]; ok {
		return s
	}
	s := validString(b)
	if ld.unknown == nil {
		ld.unknown = make(map[string]string)
	}
	if len(ld.unknown) < maxInternedTypes {
		ld.unknown[string(b)] = s
	}
	return s
}

// collector is the ListingHandler behind the convenience calls.
type collector struct{ l Listing }

func (c *collector) Event(e Event) error   { c.l.Reqs = append(c.l.Reqs, e); return nil }
func (c *collector) Running(e Event) error { c.l.Runnings = append(c.l.Runnings, e); return nil }

// validString converts b to a string, replacing each invalid UTF-8 byte by
// U+FFFD as encoding/json does.
func validString(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]byte, 0, len(b)+8)
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return string(out)
}
