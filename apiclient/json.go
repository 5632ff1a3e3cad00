package apiclient

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// Bodies are decoded by jsontext (github.com/go-json-experiment/json, the
// tokenizer that becomes encoding/json/jsontext), configured and guarded
// here for hostile or odd answers.

// decodeOptions are the tolerances of the field notes that jsontext does not
// have by default: a repeated key is read twice, as a streaming reader sees
// it, and invalid UTF-8 in a string becomes U+FFFD, as in encoding/json.
var decodeOptions = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// syntaxError is a body that is not the JSON we expect. Read errors (size
// limit, gzip, timeout) are passed through unchanged instead, so that the
// caller can classify them.
type syntaxError struct {
	off int64
	msg string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s (at byte %d)", e.msg, e.off) }

// jsonDecoder is a jsontext.Decoder reading a body through a jsonReader.
// Decoders are pooled: each keeps the buffer it grew to (4 KiB for a
// listing), which would otherwise be allocated again for every call.
type jsonDecoder struct {
	*jsontext.Decoder
	in      jsonReader
	scratch []byte // strings with escapes, unquoted
}

var jsonDecoders = make(chan *jsonDecoder, maxOpenBodies)

func getDecoder(r io.Reader) *jsonDecoder {
	var jd *jsonDecoder
	select {
	case jd = <-jsonDecoders:
	default:
		jd = &jsonDecoder{Decoder: new(jsontext.Decoder)}
		jd.in.d = jd.Decoder
	}
	jd.in.r, jd.in.grown, jd.in.err = r, false, nil
	jd.Reset(&jd.in, decodeOptions...)
	return jd
}

// release pools the decoder, unless a huge token made its buffer grow.
func (jd *jsonDecoder) release() {
	if jd.in.grown {
		return
	}
	jd.in.r = nil
	select {
	case jsonDecoders <- jd:
	default:
	}
}

// Buffering bounds of jsonReader.
const (
	maxPooledBuffer = 64 << 10 // a decoder that buffered more is not pooled
	longSpaceRun    = 4 << 10  // white space between tokens beyond this is dropped
)

// jsonReader feeds the decoder. jsontext keeps white space between two
// tokens in its buffer until the next token comes, so a body of gigabytes
// of spaces (the simulator's gzip bomb) would be buffered up to the body
// limit. Once the decoder holds a long run of white space and nothing
// else, jsonReader drops further white space before handing the bytes
// over: between two tokens it has no meaning. The body limit still counts
// every byte, and offsets in errors are exact for any body without such a
// run.
type jsonReader struct {
	r     io.Reader
	d     *jsontext.Decoder
	grown bool
	err   error // the read error of r, if any (not io.EOF)
}

func (j *jsonReader) Read(p []byte) (int, error) {
	unread := j.d.UnreadBuffer()
	j.grown = j.grown || len(unread) > maxPooledBuffer
	n, err := j.read(p)
	if len(unread) < longSpaceRun || !onlySpace(unread) {
		return n, err
	}
	// Bounded by the body: each pass reads, or ends with an error.
	for {
		k := 0
		for k < n && isSpace(p[k]) {
			k++
		}
		n = copy(p, p[k:n])
		if n > 0 || err != nil {
			return n, err
		}
		n, err = j.read(p)
	}
}

func (j *jsonReader) read(p []byte) (int, error) {
	n, err := j.r.Read(p)
	if err != nil && err != io.EOF {
		j.err = err
	}
	return n, err
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// onlySpace: b is white space, with at most one ',' or ':' in it (the
// decoder may hold the separator before the next token).
func onlySpace(b []byte) bool {
	seps := 0
	for _, c := range b {
		if c == ',' || c == ':' {
			seps++
		} else if !isSpace(c) {
			return false
		}
	}
	return seps <= 1
}

// str reads a string value or key and returns its unquoted bytes, valid
// until the next call. Invalid UTF-8 is left to the caller (validString).
func (jd *jsonDecoder) str() ([]byte, error) {
	v, err := jd.ReadValue()
	if err != nil {
		return nil, err
	}
	return jd.text(v), nil
}

// text unquotes a string value read from the decoder (valid until the next
// call); jsontext has checked it.
func (jd *jsonDecoder) text(v jsontext.Value) []byte {
	raw := v[1 : len(v)-1]
	for _, c := range raw {
		if c == '\\' {
			// The only error left is invalid UTF-8, which AppendUnquote
			// has replaced by U+FFFD.
			jd.scratch, _ = jsontext.AppendUnquote(jd.scratch[:0], v)
			return jd.scratch
		}
	}
	return raw
}

// errorf is a syntax error at the decoder's position.
func (jd *jsonDecoder) errorf(format string, args ...any) error {
	return &syntaxError{off: jd.InputOffset(), msg: fmt.Sprintf(format, args...)}
}

// notA is the error for a value that is not of the kind expected; it reads
// the value first, so that a syntax or read error there is reported instead.
func (jd *jsonDecoder) notA(format string, args ...any) error {
	k := jd.PeekKind()
	if k == 0 || k == '{' || k == '[' {
		if _, err := jd.ReadToken(); err != nil {
			return err
		}
	} else if err := jd.SkipValue(); err != nil {
		return err
	}
	return jd.errorf(format+" (it is %s)", append(args, kindText(k))...)
}

// object reads the '{' that starts a top-level object, or says what the
// body is instead.
func (jd *jsonDecoder) object(what string) error {
	k := jd.PeekKind()
	if k == '{' {
		_, err := jd.ReadToken()
		return err
	}
	if k != 0 {
		return jd.notA("%s is not a JSON object", what)
	}
	_, err := jd.ReadToken()
	var se *jsontext.SyntacticError
	if errors.As(err, &se) && !errors.Is(se.Err, io.ErrUnexpectedEOF) && jd.in.err == nil {
		first := bytes.TrimLeft(jd.UnreadBuffer(), " \t\r\n")
		if len(first) > 0 {
			return &syntaxError{off: se.ByteOffset, msg: fmt.Sprintf("%s is not a JSON object (starts with %q)", what, first[0])}
		}
	}
	return err
}

// kindText names what a value starts with, for errors.
func kindText(k jsontext.Kind) string {
	if name, ok := kindNames[k]; ok {
		return name
	}
	return "not JSON"
}

var kindNames = map[jsontext.Kind]string{'"': "a string", '0': "a number", 'n': "null", 't': "a boolean",
	'f': "a boolean", '{': "an object", '[': "an array"}

// skip consumes any JSON value, checking its syntax and bounding its depth.
func (jd *jsonDecoder) skip(what string) error {
	if k := jd.PeekKind(); k != '{' && k != '[' {
		return jd.SkipValue()
	}
	base := jd.StackDepth()
	for {
		if _, err := jd.ReadToken(); err != nil {
			return err
		}
		switch depth := jd.StackDepth() - base; {
		case depth > maxDepth:
			return jd.errorf("%s is nested too deeply", what)
		case depth == 0:
			return nil
		}
	}
}

// maxDepth bounds the nesting of skipped values (jsontext's own bound is
// 10,000 levels).
const maxDepth = 256

// atEnd fails unless only white space follows the value just read.
func (jd *jsonDecoder) atEnd(what string) error {
	_, err := jd.ReadToken()
	if err == io.EOF {
		return nil
	}
	if jd.in.err != nil {
		return jd.in.err
	}
	return jd.errorf("unexpected data after %s", what)
}

// fail turns what jsontext reports into our errors: a read error of the
// body (size limit, gzip, timeout) unchanged, the end of the body in the
// middle of what was being read, or a syntax error with its offset. Our
// own errors pass through.
func (jd *jsonDecoder) fail(err error, what string) error {
	var (
		se  *jsontext.SyntacticError
		our *syntaxError
		he  *handlerError
		mb  *messageBody
	)
	switch {
	case err == nil || errors.As(err, &our) || errors.As(err, &he) || errors.As(err, &mb):
		return err
	case jd.in.err != nil:
		return jd.in.err
	case err == io.EOF || (errors.As(err, &se) && errors.Is(se.Err, io.ErrUnexpectedEOF)):
		return &syntaxError{off: jd.InputOffset(), msg: "body ends in the middle of " + what + " (truncated answer)"}
	case se != nil:
		msg := strings.TrimPrefix(se.Err.Error(), "jsontext: ")
		if se.JSONPointer != "" {
			msg += " within " + truncate(string(se.JSONPointer), 60)
		}
		return &syntaxError{off: se.ByteOffset, msg: msg + " in " + what}
	}
	return err
}
