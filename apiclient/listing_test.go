package apiclient

import (
	"bufio"
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/indexima-exporter/indexima_exporter/event"
)

// docListing is the verbatim example listing of the field notes.
const docListing = `{"reqs": [{"type": "CLUSTER_START","date": 1574757198519,"duration": 36,"comment": ""},{"type": "TABLE_LOADED","date": 1574757199483,"duration": 333,"comment": "etalon.nyc_yellow_full"}],"runnings":[],"last":1627450023823}`

// decodeString runs the listing decoder over s with a small read size, so
// that tokens cross buffer boundaries.
func decodeString(t testing.TB, s string, bufSize int) (*Listing, error) {
	t.Helper()
	col := &collector{}
	r := bufio.NewReaderSize(iotest.HalfReader(strings.NewReader(s)), bufSize)
	info, err := decodeListing(r, col)
	col.l.Last, col.l.HasLast = info.Last, info.HasLast
	if err == nil && (info.Reqs != len(col.l.Reqs) || info.Runnings != len(col.l.Runnings)) {
		t.Fatalf("info counts %d/%d, delivered %d/%d", info.Reqs, info.Runnings, len(col.l.Reqs), len(col.l.Runnings))
	}
	return &col.l, err
}

func TestDecodeListingDocExample(t *testing.T) {
	for _, size := range []int{16, 17, 31, 4096} {
		l, err := decodeString(t, docListing, size)
		if err != nil {
			t.Fatalf("buffer %d: %v", size, err)
		}
		want := []event.Event{
			{Type: "CLUSTER_START", Date: 1574757198519, Duration: 36, HasDuration: true},
			{Type: "TABLE_LOADED", Date: 1574757199483, Duration: 333, HasDuration: true, Comment: "etalon.nyc_yellow_full"},
		}
		if len(l.Reqs) != 2 || l.Reqs[0] != want[0] || l.Reqs[1] != want[1] {
			t.Fatalf("buffer %d: reqs %+v, want %+v", size, l.Reqs, want)
		}
		if len(l.Runnings) != 0 || !l.HasLast || l.Last != 1627450023823 {
			t.Fatalf("buffer %d: runnings %v last %d/%v", size, l.Runnings, l.Last, l.HasLast)
		}
	}
}

func TestDecodeListingTolerances(t *testing.T) {
	cases := []struct {
		name, body string
		reqs       []event.Event
		runnings   []event.Event
		last       int64
		hasLast    bool
	}{
		{name: "fields in any order, unknown ones skipped",
			body:     `{"x":{"a":[1,2,{"b":null}],"c":"d"},"last":5,"runnings":[{"comment":"c","extra":[true,false],"type":"NODE_DOWN","date":7}],"reqs":[],"y":-1.5e3}`,
			runnings: []event.Event{{Type: "NODE_DOWN", Date: 7, Comment: "c"}}, last: 5, hasLast: true},
		{name: "duration missing or null",
			body: `{"reqs":[{"type":"MEMORY_LOW","date":1},{"type":"MEMORY_LOW","date":2,"duration":null}]}`,
			reqs: []event.Event{{Type: "MEMORY_LOW", Date: 1}, {Type: "MEMORY_LOW", Date: 2}}},
		{name: "numbers as floats and strings",
			body: `{"reqs":[{"type":"SAVE_METADATA","date":1.574757198519E12,"duration":"36","comment":"3"}],"last":"1627450023823"}`,
			reqs: []event.Event{{Type: "SAVE_METADATA", Date: 1574757198519, Duration: 36, HasDuration: true, Comment: "3"}},
			last: 1627450023823, hasLast: true},
		{name: "date as RFC 3339 text",
			body: `{"reqs":[{"type":"CLUSTER_STOP","date":"2019-11-26T08:33:18.519Z"}]}`,
			reqs: []event.Event{{Type: "CLUSTER_STOP", Date: 1574757198519}}},
		{name: "escapes and surrogate pairs",
			body: `{"reqs":[{"type":"TABLE_LOADED","date":1,"comment":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00\ud800x"}]}`,
			reqs: []event.Event{{Type: "TABLE_LOADED", Date: 1, Comment: "a\"b\\c/d\b\f\n\r\té😀\uFFFDx"}}},
		{name: "escaped keys and type",
			body: `{"\u0072eqs":[{"\u0074ype":"CLUSTER_\u0049NIT","date":3}]}`,
			reqs: []event.Event{{Type: "CLUSTER_INIT", Date: 3}}},
		{name: "unknown type is data",
			body: `{"reqs":[{"type":"BRAND_NEW","date":4,"comment":7}]}`,
			reqs: []event.Event{{Type: "BRAND_NEW", Date: 4, Comment: "7"}}},
		{name: "only last", body: ` {"last":12} `, last: 12, hasLast: true},
		{name: "null arrays and null last", body: `{"reqs":null,"runnings":null,"last":null}`},
		{name: "message beside listing fields is a listing", body: `{"message":"ok","reqs":[]}`},
		{name: "negative and huge integers",
			body: `{"reqs":[{"type":"X","date":-5,"duration":9223372036854775807}]}`,
			reqs: []event.Event{{Type: "X", Date: -5, Duration: 9223372036854775807, HasDuration: true}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l, err := decodeString(t, tc.body, 16)
			if err != nil {
				t.Fatal(err)
			}
			if !sameEvents(l.Reqs, tc.reqs) || !sameEvents(l.Runnings, tc.runnings) {
				t.Fatalf("got reqs %+v runnings %+v, want %+v %+v", l.Reqs, l.Runnings, tc.reqs, tc.runnings)
			}
			if l.Last != tc.last || l.HasLast != tc.hasLast {
				t.Fatalf("last %d/%v, want %d/%v", l.Last, l.HasLast, tc.last, tc.hasLast)
			}
		})
	}
}

func sameEvents(a, b []event.Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestDecodeListingRejects(t *testing.T) {
	cases := map[string]string{
		"top-level array":     `[{"type":"X"}]`,
		"top-level string":    `"reqs"`,
		"html":                "<html><body>502 Bad Gateway</body></html>",
		"empty body":          ``,
		"empty object":        `{}`,
		"wrong shape":         `{"rows":[{"type":"TABLE_LOADED","date":1}],"total":1}`,
		"event not an object": `{"reqs":["CLUSTER_START"]}`,
		"event without type":  `{"reqs":[{"date":1}]}`,
		"type not a string":   `{"reqs":[{"type":3,"date":1}]}`,
		"type null":           `{"reqs":[{"type":null}]}`,
		"reqs not an array":   `{"reqs":{"type":"X"}}`,
		"truncated":           `{"reqs":[{"type":"X","date":1},{"type":"Y","da`,
		"truncated in string": `{"reqs":[{"type":"X","comment":"abc`,
		"syntax error midway": `{"reqs":[{"type":"X","date":1},,#!{"type":"Y"}]}`,
		"trailing garbage":    `{"last":1} x`,
		"bad date":            `{"reqs":[{"type":"X","date":"yesterday"}]}`,
		"fractional date":     `{"reqs":[{"type":"X","date":1.5}]}`,
		"date object":         `{"reqs":[{"type":"X","date":{}}]}`,
		"control char":        "{\"reqs\":[{\"type\":\"X\",\"comment\":\"a\x01b\"}]}",
		"bad escape":          `{"reqs":[{"type":"X","comment":"\q"}]}`,
		"bad unicode escape":  `{"reqs":[{"type":"X","comment":"\u12G4"}]}`,
		"bad literal":         `{"reqs":[{"type":"X","duration":nul}]}`,
		"too deep unknown":    `{"x":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `,"last":1}`,
		"missing colon":       `{"reqs" []}`,
		"unterminated object": `{"last":1`,
		"message only":        `{"message":"No session attribute found, ..."}`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := decodeString(t, body, 16)
			if err == nil {
				t.Fatal("accepted")
			}
			var se *syntaxError
			var mb *messageBody
			if !errors.As(err, &se) && !errors.As(err, &mb) {
				t.Fatalf("error %T %v, want a syntax or message error", err, err)
			}
			if (name == "message only") != (mb != nil) {
				t.Fatalf("message body detection wrong: %v", err)
			}
		})
	}
}

func TestDecodeListingMessageText(t *testing.T) {
	_, err := decodeString(t, `{"message":"No session attribute found, please log in"}`, 4096)
	var mb *messageBody
	if !errors.As(err, &mb) || mb.message != "No session attribute found, please log in" {
		t.Fatalf("got %v", err)
	}
}

type failingHandler struct{ n int }

var errStop = errors.New("stop here")

func (h *failingHandler) Event(event.Event) error {
	h.n++
	if h.n == 2 {
		return errStop
	}
	return nil
}
func (h *failingHandler) Running(event.Event) error { return nil }

func TestDecodeListingHandlerErrorStops(t *testing.T) {
	h := &failingHandler{}
	_, err := decodeListing(bufio.NewReader(strings.NewReader(docListing)), h)
	if !errors.Is(err, errStop) || h.n != 2 {
		t.Fatalf("err %v after %d events", err, h.n)
	}
}

func TestDecodeListingAllocatesOnlyForComments(t *testing.T) {
	listing := func(n int, comment string) string {
		var sb strings.Builder
		sb.WriteString(`{"reqs":[`)
		for i := range n {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(`{"type":"HYPER_INDEX_LOADED","date":1574757198519,"duration":12,"comment":"` + comment + `"}`)
		}
		sb.WriteString(`],"runnings":[],"last":1627450023823}`)
		return sb.String()
	}
	allocs := func(body string) float64 {
		return testing.AllocsPerRun(20, func() {
			r := bufio.NewReaderSize(strings.NewReader(body), 4096)
			if _, err := decodeListing(r, nopHandler{}); err != nil {
				t.Fatal(err)
			}
		})
	}
	few, many := allocs(listing(2, "")), allocs(listing(202, ""))
	if many-few > 2 {
		t.Fatalf("200 more events without comment cost %v more allocations", many-few)
	}
	few, many = allocs(listing(2, "sales.orders")), allocs(listing(202, "sales.orders"))
	if per := (many - few) / 200; per > 1.05 {
		t.Fatalf("%.2f allocations per event with a comment, want 1", per)
	}
}

type nopHandler struct{}

func (nopHandler) Event(event.Event) error   { return nil }
func (nopHandler) Running(event.Event) error { return nil }
