package apiclient

import (
	"bytes"
	"errors"
	"fmt"
	"iter"
	"math"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// The answers of version, columns, count and login are small and
// undocumented: each is checked whole by jsontext, then its raw values are
// searched for the shapes the field notes list.

var errNotJSON = errors.New("the answer is not valid JSON")

// parseJSON checks that data is one JSON value and nothing else.
func parseJSON(data []byte) (jsontext.Value, error) {
	jd := getDecoder(bytes.NewReader(data))
	defer jd.release()
	v, err := jd.ReadValue()
	if err == nil {
		v = v.Clone() // the next read invalidates it
		if err = jd.atEnd("the value"); err == nil {
			return v, nil
		}
	}
	return nil, fmt.Errorf("%w: %v", errNotJSON, jd.fail(err, "the answer"))
}

// members yields the names and raw values of a checked JSON object, in
// order (a repeated name is yielded twice).
func members(obj jsontext.Value) iter.Seq2[string, jsontext.Value] {
	return func(yield func(string, jsontext.Value) bool) {
		jd := getDecoder(bytes.NewReader(obj))
		defer jd.release()
		if _, err := jd.ReadToken(); err != nil || obj.Kind() != '{' {
			return
		}
		for jd.PeekKind() == '"' {
			name, err := jd.str()
			if err != nil {
				return
			}
			n := string(name) // before the next read invalidates it
			v, err := jd.ReadValue()
			if err != nil || !yield(n, v) {
				return
			}
		}
	}
}

// elements yields the raw values of a checked JSON array.
func elements(arr jsontext.Value) iter.Seq[jsontext.Value] {
	return func(yield func(jsontext.Value) bool) {
		jd := getDecoder(bytes.NewReader(arr))
		defer jd.release()
		if _, err := jd.ReadToken(); err != nil || arr.Kind() != '[' {
			return
		}
		for jd.PeekKind() != ']' {
			v, err := jd.ReadValue()
			if err != nil || !yield(v) {
				return
			}
		}
	}
}

// member returns the last value named name in obj, or nil.
func member(obj jsontext.Value, name string) jsontext.Value {
	var found jsontext.Value
	for n, v := range members(obj) {
		if n == name {
			found = v.Clone()
		}
	}
	return found
}

// unquote returns the text of a JSON string value, "" for other values.
func unquote(v jsontext.Value) string {
	if v.Kind() != '"' {
		return ""
	}
	b, _ := jsontext.AppendUnquote(nil, v) // invalid UTF-8 becomes U+FFFD
	return string(b)
}

// jsonMessage reports whether data is a JSON object with a "message" field,
// and returns that message (sanitised, bounded).
func jsonMessage(data []byte) (string, bool) {
	v, err := parseJSON(data)
	if err != nil {
		return "", false
	}
	return objectMessage(v, false)
}

// objectMessage returns the "message" of an object (its text, or the JSON
// of a value that is not a string); alone asks for an object holding
// nothing else.
func objectMessage(obj jsontext.Value, alone bool) (string, bool) {
	var m jsontext.Value
	n := 0
	for name, v := range members(obj) {
		n++
		if name == "message" {
			m = v.Clone()
		}
	}
	if m == nil || (alone && n != 1) {
		return "", false
	}
	text := unquote(m)
	if m.Kind() != '"' {
		text = string(m)
	}
	return sanitize([]byte(text), maxMessageBytes), true
}

// decodeVersion accepts a bare string, an object with a "version" field
// (string or number), or any other valid JSON (Version empty, Raw kept).
func decodeVersion(data []byte) (VersionInfo, error) {
	info := VersionInfo{Raw: sanitize(bytes.TrimSpace(data), maxRawBytes)}
	v, err := parseJSON(data)
	if err != nil {
		return info, err
	}
	if v.Kind() == '{' {
		if m, ok := objectMessage(v, true); ok {
			return info, &messageBody{message: m}
		}
		v = member(v, "version")
	}
	switch v.Kind() {
	case '"':
		info.Version = unquote(v)
	case '0':
		info.Version = string(v)
	}
	info.Version = sanitize([]byte(info.Version), maxRawBytes)
	return info, nil
}

// decodeColumns accepts an array of names, an array of objects with "name"
// or "columnName", or an object holding such an array under "columns".
// Count is -1 when the shape is valid JSON but none of these.
func decodeColumns(data []byte) (ColumnsInfo, error) {
	info := ColumnsInfo{Count: -1, Raw: sanitize(bytes.TrimSpace(data), maxRawBytes)}
	v, err := parseJSON(data)
	if err != nil {
		return info, err
	}
	if v.Kind() == '{' {
		if m, ok := objectMessage(v, true); ok {
			return info, &messageBody{message: m}
		}
		v = member(v, "columns")
	}
	if v.Kind() != '[' {
		return info, nil
	}
	var names []string
	n := 0
	for e := range elements(v) {
		n++
		switch e.Kind() {
		case '"':
			names = append(names, unquote(e))
		case '{':
			if name := member(e, "name"); name.Kind() == '"' {
				names = append(names, unquote(name))
			} else if name := member(e, "columnName"); name.Kind() == '"' {
				names = append(names, unquote(name))
			}
		}
	}
	if n > 0 && len(names) == 0 {
		return info, nil // an array of something else: count unknown
	}
	info.Columns, info.Count = names, len(names)
	return info, nil
}

// errCountShape is a count answer of none of the accepted shapes.
type errCountShape struct{ why string }

func (e *errCountShape) Error() string { return "the count answer " + e.why }

// decodeCount accepts a bare JSON number, a number in a JSON string, or an
// object holding exactly one numeric field (e.g. {"count": 12}).
func decodeCount(data []byte) (int64, error) {
	v, err := parseJSON(data)
	if err != nil {
		return 0, err
	}
	switch v.Kind() {
	case '0':
		return countNumber(string(v))
	case '"':
		return countNumber(strings.TrimSpace(unquote(v)))
	case '{':
		var nums, strs []string
		for _, f := range members(v) {
			switch s := strings.TrimSpace(unquote(f)); {
			case f.Kind() == '0':
				nums = append(nums, string(f))
			case f.Kind() == '"':
				if _, err := countNumber(s); err == nil {
					strs = append(strs, s)
				}
			}
		}
		switch {
		case len(nums) == 1:
			return countNumber(nums[0])
		case len(nums) > 1:
			return 0, &errCountShape{why: fmt.Sprintf("is an object with %d numeric fields, expected one", len(nums))}
		case len(strs) == 1:
			return countNumber(strs[0])
		}
		if m, ok := objectMessage(v, false); ok {
			return 0, &messageBody{message: m}
		}
		return 0, &errCountShape{why: "is an object without a numeric field"}
	}
	return 0, &errCountShape{why: "is neither a number, a numeric string nor an object holding one number"}
}

// countNumber parses a non-negative integer; 12.0 and 1.2e1 are accepted,
// fractions and negatives are not.
func countNumber(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 {
			return 0, &errCountShape{why: fmt.Sprintf("is negative (%d)", n)}
		}
		return n, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, &errCountShape{why: fmt.Sprintf("is not a number (%q)", truncate(sanitize([]byte(s), 40), 40))}
	}
	if f != math.Trunc(f) || math.IsInf(f, 0) {
		return 0, &errCountShape{why: fmt.Sprintf("is not a whole number (%s)", truncate(s, 40))}
	}
	if f < 0 {
		return 0, &errCountShape{why: fmt.Sprintf("is negative (%s)", truncate(s, 40))}
	}
	if f >= math.MaxInt64 {
		return 0, &errCountShape{why: "is too large"}
	}
	return int64(f), nil
}

// loginSession is the part of the login answer the client uses.
type loginSession struct {
	token     string
	createdAt int64 // Unix ms, 0 when missing (older releases)
}

// errLoginShape is a 2xx login answer without a usable token. Its text never
// holds the body, which may contain a token.
type errLoginShape struct{ why string }

func (e *errLoginShape) Error() string { return "the login answer " + e.why }

// decodeLogin reads the login session; a {"message"} answer is a refusal.
func decodeLogin(data []byte) (loginSession, error) {
	v, err := parseJSON(data)
	if err != nil {
		return loginSession{}, &errLoginShape{why: "is not valid JSON"}
	}
	if v.Kind() != '{' {
		return loginSession{}, &errLoginShape{why: "is not a JSON object"}
	}
	id := member(v, "id")
	if id == nil {
		if m, ok := objectMessage(v, false); ok {
			return loginSession{}, &messageBody{message: m}
		}
		return loginSession{}, &errLoginShape{why: `has no "id" (token) field`}
	}
	tok := unquote(id)
	if tok == "" {
		return loginSession{}, &errLoginShape{why: `has an "id" (token) that is not a non-empty string`}
	}
	for i := 0; i < len(tok); i++ {
		if c := tok[i]; c < 0x21 || c == 0x7f {
			return loginSession{}, &errLoginShape{why: `has an "id" (token) that cannot be sent in a header`}
		}
	}
	s := loginSession{token: tok}
	if c := member(v, "createdAt"); c.Kind() == '0' {
		s.createdAt, _ = strconv.ParseInt(string(c), 10, 64)
	}
	return s, nil
}
