package apiclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The answers of version, columns and count are small and undocumented, so
// they are decoded generically with encoding/json and then searched for the
// shapes the field notes list.

var errNotJSON = errors.New("the answer is not valid JSON")

// parseJSON decodes a whole body into generic values, numbers kept as text.
func parseJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %v", errNotJSON, err)
	}
	if !json.Valid(data) {
		return nil, fmt.Errorf("%w: unexpected data after the first value", errNotJSON)
	}
	return v, nil
}

// jsonMessage reports whether data is a JSON object with a "message" field,
// and returns that message (sanitised, bounded).
func jsonMessage(data []byte) (string, bool) {
	v, err := parseJSON(data)
	if err != nil {
		return "", false
	}
	return objectMessage(v)
}

func objectMessage(v any) (string, bool) {
	obj, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	m, ok := obj["message"]
	if !ok {
		return "", false
	}
	s, _ := m.(string)
	if s == "" {
		s = fmt.Sprint(m)
	}
	return sanitize([]byte(s), maxMessageBytes), true
}

// decodeVersion accepts a bare string, an object with a "version" field
// (string or number), or any other valid JSON (Version empty, Raw kept).
func decodeVersion(data []byte) (VersionInfo, error) {
	info := VersionInfo{Raw: sanitize(bytes.TrimSpace(data), maxRawBytes)}
	v, err := parseJSON(data)
	if err != nil {
		return info, err
	}
	switch t := v.(type) {
	case string:
		info.Version = t
	case json.Number:
		info.Version = t.String()
	case map[string]any:
		switch ver := t["version"].(type) {
		case string:
			info.Version = ver
		case json.Number:
			info.Version = ver.String()
		case nil:
			if m, ok := objectMessage(t); ok && len(t) == 1 {
				return info, &messageBody{message: m}
			}
		}
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
	if obj, ok := v.(map[string]any); ok {
		cols, has := obj["columns"]
		if !has {
			if m, ok := objectMessage(obj); ok && len(obj) == 1 {
				return info, &messageBody{message: m}
			}
			return info, nil
		}
		v = cols
	}
	arr, ok := v.([]any)
	if !ok {
		return info, nil
	}
	names := make([]string, 0, len(arr))
	for _, e := range arr {
		switch c := e.(type) {
		case string:
			names = append(names, c)
		case map[string]any:
			if n, ok := c["name"].(string); ok {
				names = append(names, n)
			} else if n, ok := c["columnName"].(string); ok {
				names = append(names, n)
			}
		}
	}
	if len(arr) > 0 && len(names) == 0 {
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
	if n, ok := plainCount(data); ok {
		return n, nil
	}
	return decodeCountJSON(data)
}

// plainCount reads the usual answer, a bare number of at most 18 digits
// (no overflow) without a leading zero (which JSON forbids), between JSON
// whitespace, without a JSON decoder, whose allocations every node-scrape
// would pay for one number. Anything else is decodeCountJSON's.
func plainCount(data []byte) (int64, bool) {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	for len(data) > 0 && isSpace(data[0]) {
		data = data[1:]
	}
	for len(data) > 0 && isSpace(data[len(data)-1]) {
		data = data[:len(data)-1]
	}
	if len(data) == 0 || len(data) > 18 || (data[0] == '0' && len(data) > 1) {
		return 0, false
	}
	var n int64
	for _, c := range data {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// decodeCountJSON is decodeCount for every shape, through a JSON decoder.
func decodeCountJSON(data []byte) (int64, error) {
	v, err := parseJSON(data)
	if err != nil {
		return 0, err
	}
	switch t := v.(type) {
	case json.Number:
		return countNumber(t.String())
	case string:
		return countNumber(strings.TrimSpace(t))
	case map[string]any:
		var nums, strs []string
		for _, f := range t {
			switch x := f.(type) {
			case json.Number:
				nums = append(nums, x.String())
			case string:
				if _, err := countNumber(strings.TrimSpace(x)); err == nil {
					strs = append(strs, strings.TrimSpace(x))
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
		if m, ok := objectMessage(t); ok {
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
	obj, ok := v.(map[string]any)
	if !ok {
		return loginSession{}, &errLoginShape{why: "is not a JSON object"}
	}
	id, has := obj["id"]
	if !has {
		if m, ok := objectMessage(obj); ok {
			return loginSession{}, &messageBody{message: m}
		}
		return loginSession{}, &errLoginShape{why: `has no "id" (token) field`}
	}
	tok, ok := id.(string)
	if !ok || tok == "" {
		return loginSession{}, &errLoginShape{why: `has an "id" (token) that is not a non-empty string`}
	}
	for i := 0; i < len(tok); i++ {
		if c := tok[i]; c < 0x21 || c == 0x7f {
			return loginSession{}, &errLoginShape{why: `has an "id" (token) that cannot be sent in a header`}
		}
	}
	s := loginSession{token: tok}
	if n, ok := obj["createdAt"].(json.Number); ok {
		s.createdAt, _ = n.Int64()
	}
	return s, nil
}
