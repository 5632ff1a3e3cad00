package apiclient

import (
	"bufio"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/indexima-exporter/indexima_exporter/event"
)

// maxInternedTypes bounds the cache of unknown type names, so a hostile body
// cannot grow it without end; past it, unknown names are allocated per event.
const maxInternedTypes = 64

// maxMessageBytes bounds the "message" text kept from an error body.
const maxMessageBytes = 256

// handlerError marks an error returned by the caller's event.Handler: it is
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

type listingDecoder struct {
	s       *scanner
	h       event.Handler
	info    ListingInfo
	unknown map[string]string // interned unknown type names
}

// decodeListing decodes an event listing from r, handing each event to h.
// Errors: *syntaxError (not a listing), *messageBody, *handlerError, or the
// read error of r (size limit, gzip, timeout).
func decodeListing(r *bufio.Reader, h event.Handler) (ListingInfo, error) {
	d := listingDecoder{s: newScanner(r), h: h}
	// Decode first, then read d.info: in one return statement, Go leaves
	// unspecified whether d.info is read before or after the call fills it.
	err := d.decode()
	return d.info, err
}

func (d *listingDecoder) decode() error {
	s := d.s
	c, err := s.peek("the listing")
	if err != nil {
		return err
	}
	if c != '{' {
		return s.errorf("the listing is not a JSON object (starts with %s)", quoteByte(c))
	}
	s.pos++
	var sawListing, sawMessage bool
	var message string
	c, err = s.peek("the listing")
	if err != nil {
		return err
	}
	if c == '}' {
		s.pos++
	} else {
		for {
			key, err := s.str("a key of the listing")
			if err != nil {
				return err
			}
			// Keys are compared before the next scanner call invalidates them.
			field := listingField(key)
			if err := s.expect(':', "the listing"); err != nil {
				return err
			}
			switch field {
			case fieldReqs:
				sawListing = true
				if err := d.events("reqs", false, &d.info.Reqs); err != nil {
					return err
				}
			case fieldRunnings:
				sawListing = true
				if err := d.events("runnings", true, &d.info.Runnings); err != nil {
					return err
				}
			case fieldLast:
				sawListing = true
				v, ok, err := s.intValue(`"last"`)
				if err != nil {
					return err
				}
				d.info.Last, d.info.HasLast = v, ok
			case fieldMessage:
				sawMessage = true
				if message, err = d.messageValue(); err != nil {
					return err
				}
			default:
				if err := s.skip("an unknown field of the listing", 0); err != nil {
					return err
				}
			}
			c, err := s.peek("the listing")
			if err != nil {
				return err
			}
			s.pos++
			if c == '}' {
				break
			}
			if c != ',' {
				return s.errorf("expected ',' or '}' in the listing, found %s", quoteByte(c))
			}
		}
	}
	end, err := s.atEnd()
	if err != nil {
		return err
	}
	if !end {
		return s.errorf("unexpected data after the listing")
	}
	if !sawListing {
		if sawMessage {
			return &messageBody{message: message}
		}
		return s.errorf(`the answer has none of the listing fields "reqs", "runnings", "last"`)
	}
	return nil
}

type field int

const (
	fieldOther field = iota
	fieldReqs
	fieldRunnings
	fieldLast
	fieldMessage
)

func listingField(k []byte) field {
	switch {
	case string(k) == "reqs":
		return fieldReqs
	case string(k) == "runnings":
		return fieldRunnings
	case string(k) == "last":
		return fieldLast
	case string(k) == "message":
		return fieldMessage
	}
	return fieldOther
}

// messageValue keeps a bounded, sanitised copy of a "message" value.
func (d *listingDecoder) messageValue() (string, error) {
	c, err := d.s.peek(`"message"`)
	if err != nil {
		return "", err
	}
	if c != '"' {
		return "", d.s.skip(`"message"`, 0)
	}
	b, err := d.s.str(`"message"`)
	if err != nil {
		return "", err
	}
	return sanitize(b, maxMessageBytes), nil
}

// events decodes one array of events (null is an empty array).
func (d *listingDecoder) events(name string, running bool, n *int) error {
	s := d.s
	c, err := s.peek(name)
	if err != nil {
		return err
	}
	if c == 'n' {
		return s.literal("null", name)
	}
	if c != '[' {
		return s.errorf("%q is not an array (starts with %s)", name, quoteByte(c))
	}
	s.pos++
	c, err = s.peek(name)
	if err != nil {
		return err
	}
	if c == ']' {
		s.pos++
		return nil
	}
	for {
		ev, err := d.event(name, *n)
		if err != nil {
			return err
		}
		if running {
			err = d.h.Running(ev)
		} else {
			err = d.h.Event(ev)
		}
		if err != nil {
			return &handlerError{err: err}
		}
		*n++
		c, err := s.peek(name)
		if err != nil {
			return err
		}
		s.pos++
		if c == ']' {
			return nil
		}
		if c != ',' {
			return s.errorf("expected ',' or ']' in %q, found %s", name, quoteByte(c))
		}
	}
}

// event decodes one event object; fields may come in any order and unknown
// ones are skipped.
func (d *listingDecoder) event(array string, index int) (event.Event, error) {
	s := d.s
	var ev event.Event
	c, err := s.peek(array)
	if err != nil {
		return ev, err
	}
	if c != '{' {
		return ev, s.errorf("event %d of %q is not an object (starts with %s)", index, array, quoteByte(c))
	}
	s.pos++
	c, err = s.peek(array)
	if err != nil {
		return ev, err
	}
	if c == '}' {
		s.pos++
		return ev, s.errorf("event %d of %q has no \"type\"", index, array)
	}
	hasType := false
	for {
		key, err := s.str("a key of an event")
		if err != nil {
			return ev, err
		}
		k := eventField(key)
		if err := s.expect(':', "an event"); err != nil {
			return ev, err
		}
		switch k {
		case evType:
			c, err := s.peek(`"type"`)
			if err != nil {
				return ev, err
			}
			if c != '"' {
				return ev, s.errorf("event %d of %q: \"type\" is not a string", index, array)
			}
			b, err := s.str(`"type"`)
			if err != nil {
				return ev, err
			}
			ev.Type = d.intern(b)
			hasType = true
		case evDate:
			if ev.Date, _, err = s.intValue(`"date"`); err != nil {
				return ev, err
			}
		case evDuration:
			if ev.Duration, ev.HasDuration, err = s.intValue(`"duration"`); err != nil {
				return ev, err
			}
		case evComment:
			if ev.Comment, err = d.comment(); err != nil {
				return ev, err
			}
		default:
			if err := s.skip("an unknown field of an event", 0); err != nil {
				return ev, err
			}
		}
		c, err := s.peek(array)
		if err != nil {
			return ev, err
		}
		s.pos++
		if c == '}' {
			break
		}
		if c != ',' {
			return ev, s.errorf("expected ',' or '}' in event %d of %q, found %s", index, array, quoteByte(c))
		}
	}
	if !hasType {
		return ev, s.errorf("event %d of %q has no \"type\"", index, array)
	}
	return ev, nil
}

const (
	evOther = iota
	evType
	evDate
	evDuration
	evComment
)

func eventField(k []byte) int {
	switch {
	case string(k) == "type":
		return evType
	case string(k) == "date":
		return evDate
	case string(k) == "duration":
		return evDuration
	case string(k) == "comment":
		return evComment
	}
	return evOther
}

// comment reads the comment: a string, or (tolerated) a number or boolean
// kept as its JSON text; null, objects and arrays give "".
func (d *listingDecoder) comment() (string, error) {
	s := d.s
	c, err := s.peek(`"comment"`)
	if err != nil {
		return "", err
	}
	switch {
	case c == '"':
		b, err := s.str(`"comment"`)
		if err != nil || len(b) == 0 {
			return "", err
		}
		return validString(b), nil
	case c == '-' || (c >= '0' && c <= '9'):
		b, err := s.numberToken(`"comment"`)
		if err != nil {
			return "", err
		}
		if _, err := strconv.ParseFloat(string(b), 64); err != nil && !isRangeError(err) {
			return "", s.errorf("invalid number %s in \"comment\"", truncate(string(b), 40))
		}
		return string(b), nil
	case c == 't':
		return "true", s.literal("true", `"comment"`)
	case c == 'f':
		return "false", s.literal("false", `"comment"`)
	}
	return "", s.skip(`"comment"`, 0)
}

// intern returns a constant string for the known type names
// (event.KnownTypes) and a cached one for a few unknown names, so that
// decoding allocates only for comments.
func (d *listingDecoder) intern(b []byte) string {
	for _, t := range event.KnownTypes {
		if string(b) == t {
			return t
		}
	}
	if s, ok := d.unknown[string(b)]; ok {
		return s
	}
	s := validString(b)
	if d.unknown == nil {
		d.unknown = make(map[string]string)
	}
	if len(d.unknown) < maxInternedTypes {
		d.unknown[string(b)] = s
	}
	return s
}

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
