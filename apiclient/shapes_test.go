package apiclient

import (
	"errors"
	"strings"
	"testing"
)

func TestDecodeCountAccepts(t *testing.T) {
	cases := map[string]int64{
		`12`:                         12,
		` 0 `:                        0,
		`"12"`:                       12,
		`" 7 "`:                      7,
		`{"count":12}`:               12,
		`{"count":12,"unit":"evts"}`: 12,
		`{"n":"42"}`:                 42,
		`12.0`:                       12,
		`1.2e1`:                      12,
		`9007199254740993`:           9007199254740993,
	}
	for body, want := range cases {
		got, err := decodeCount([]byte(body))
		if err != nil || got != want {
			t.Errorf("%s: got %d, %v; want %d", body, got, err, want)
		}
	}
}

func TestDecodeCountRejects(t *testing.T) {
	for _, body := range []string{`-1`, `1.5`, `"abc"`, `{"a":1,"b":2}`, `{}`, `[12]`, `true`, `null`,
		`{"count":-3}`, `{"count":1.5}`, `12 13`, `{"count":`, `<html>`, ``, `1e400`, `"-4"`} {
		_, err := decodeCount([]byte(body))
		var shape *errCountShape
		if err == nil || (!errors.As(err, &shape) && !errors.Is(err, errNotJSON)) {
			t.Errorf("%s: got %v, want a shape or JSON error", body, err)
		}
	}
	_, err := decodeCount([]byte(`{"message":"No session attribute found"}`))
	var mb *messageBody
	if !errors.As(err, &mb) {
		t.Errorf("message body: got %v", err)
	}
}

func TestDecodeVersion(t *testing.T) {
	cases := []struct{ body, version string }{
		{`"2024.1.0"`, "2024.1.0"},
		{`{"version":"2023.2.1","build":"abc"}`, "2023.2.1"},
		{`{"version":2021.1}`, "2021.1"},
		{`{"name":"indexima","release":{"major":2024}}`, ""},
		{`[1,2]`, ""},
		{`42`, "42"},
	}
	for _, tc := range cases {
		v, err := decodeVersion([]byte(tc.body))
		if err != nil || v.Version != tc.version || v.Raw != tc.body {
			t.Errorf("%s: got %+v, %v; want version %q", tc.body, v, err, tc.version)
		}
	}
	if _, err := decodeVersion([]byte(`<html>oops</html>`)); !errors.Is(err, errNotJSON) {
		t.Errorf("html: got %v", err)
	}
	var mb *messageBody
	if _, err := decodeVersion([]byte(`{"message":"No session"}`)); !errors.As(err, &mb) {
		t.Errorf("message: got %v", err)
	}
	long := `"` + strings.Repeat("v", 5000) + `"`
	v, err := decodeVersion([]byte(long))
	if err != nil || len(v.Raw) > maxRawBytes || len(v.Version) > maxRawBytes {
		t.Errorf("long version: raw %d bytes, version %d bytes, %v", len(v.Raw), len(v.Version), err)
	}
}

func TestDecodeColumns(t *testing.T) {
	cases := []struct {
		body  string
		names []string
		count int
	}{
		{`["id","amount"]`, []string{"id", "amount"}, 2},
		{`[{"name":"id","type":"int"},{"columnName":"amount"}]`, []string{"id", "amount"}, 2},
		{`{"columns":["a","b","c"]}`, []string{"a", "b", "c"}, 3},
		{`{"columns":[{"name":"a"}],"table":"t"}`, []string{"a"}, 1},
		{`[]`, nil, 0},
		{`{"id":"int"}`, nil, -1},
		{`[1,2,3]`, nil, -1},
		{`"id,amount"`, nil, -1},
	}
	for _, tc := range cases {
		c, err := decodeColumns([]byte(tc.body))
		if err != nil || c.Count != tc.count || strings.Join(c.Columns, ",") != strings.Join(tc.names, ",") {
			t.Errorf("%s: got %+v, %v; want %v (%d)", tc.body, c, err, tc.names, tc.count)
		}
	}
	if _, err := decodeColumns([]byte(`[{"name":"id"`)); !errors.Is(err, errNotJSON) {
		t.Errorf("truncated: got %v", err)
	}
}

func TestDecodeLogin(t *testing.T) {
	tok := strings.Repeat("a1B2", 16)
	s, err := decodeLogin([]byte(`{"id":"` + tok + `","userName":"u","isAdministrator":false,"localUser":false}`))
	if err != nil || s.token != tok || s.createdAt != 0 {
		t.Fatalf("older answer: %+v %v", s, err)
	}
	s, err = decodeLogin([]byte(`{"id":"` + tok + `","createdAt":1667027559965}`))
	if err != nil || s.createdAt != 1667027559965 {
		t.Fatalf("newer answer: %+v %v", s, err)
	}
	for _, body := range []string{`{"id":""}`, `{"id":12}`, `{"userName":"u"}`, `[]`, `nope`, `{"id":"a b"}`} {
		_, err := decodeLogin([]byte(body))
		var shape *errLoginShape
		if !errors.As(err, &shape) {
			t.Errorf("%s: got %v", body, err)
		}
	}
	var mb *messageBody
	if _, err := decodeLogin([]byte(`{"message":"Bad credentials"}`)); !errors.As(err, &mb) {
		t.Errorf("message: got %v", err)
	}
}
