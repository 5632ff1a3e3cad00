package apiclient

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// answers a console (or a proxy before it) may send, for the seeds.
var answerSeeds = []string{
	"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nVary: Accept-Encoding\r\nDate: Wed, 25 Nov 2026 12:00:00 GMT\r\nContent-Length: 5\r\n\r\nhello",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-Trailer: 1\r\n\r\n",
	"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi",
	"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nhi",
	"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nto the end",
	"HTTP/1.1 204 No Content\r\n\r\n",
	"HTTP/1.1 302 Found\r\nLocation: https://sso.example/login\r\nSet-Cookie: a=b\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 100 Continue\r\n\r\n",
	"HTTP/1.1 401 Unauthorized\r\nx-lower-case: v\r\nContent-Length: 3\r\n\r\nno!",
	"HTTP/1.1 200\r\nContent-Length: 1\r\n\r\n1",
	"HTTP/1.1 200 OK\nContent-Length: 1\n\n1",
	"HTTP/1.1 200 OK\r\nFolded: a\r\n b\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
	"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
	"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
	"HTTP/2 200 OK\r\n\r\n",
	"HTTP/1.1 abc OK\r\n\r\n",
	"garbage",
	"",
}

// readResponse reads any answer as net/http's ReadResponse does: the same
// status, headers, framing, body and connection reuse, or an error for
// both.
func FuzzReadResponse(f *testing.F) {
	for _, s := range answerSeeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, answer []byte, head bool) {
		method := http.MethodGet
		if head {
			method = http.MethodHead
		}
		req := &http.Request{Method: method, URL: &url.URL{Scheme: "http", Host: "console", Path: "/"}}
		// As exchange reads: the first byte waited for, which fills the
		// buffer (of the pooled readers' size) with what has come.
		want, wantErr := http.ReadResponse(bufio.NewReaderSize(bytes.NewReader(answer), 1024), req)
		r := bufio.NewReaderSize(bytes.NewReader(answer), 1024)
		_, _ = r.Peek(1)
		got, gotErr := readResponse(r, req)
		if (wantErr != nil) != (gotErr != nil) {
			t.Fatalf("%q: net/http %v, ours %v", answer, wantErr, gotErr)
		}
		if wantErr != nil {
			return
		}
		delete(want.Header, "Cache-Control") // net/http adds it for a Pragma: no-cache
		delete(got.Header, "Cache-Control")
		if got.StatusCode != want.StatusCode || got.Proto != want.Proto || got.Status != want.Status ||
			got.Close != want.Close || !reflect.DeepEqual(got.Header, want.Header) {
			t.Fatalf("%q:\nnet/http %d %q close=%t %v\nours     %d %q close=%t %v", answer,
				want.StatusCode, want.Status, want.Close, want.Header, got.StatusCode, got.Status, got.Close, got.Header)
		}
		wb, wantErr := io.ReadAll(want.Body)
		gb, gotErr := io.ReadAll(got.Body)
		if !bytes.Equal(wb, gb) || (wantErr != nil) != (gotErr != nil) {
			t.Fatalf("%q: body: net/http %q %v, ours %q %v", answer, wb, wantErr, gb, gotErr)
		}
	})
}

// Two answers on one connection: the second is read where the first
// ended, whatever the first's framing.
func TestReadResponseLeavesTheNextAnswer(t *testing.T) {
	next := "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nnext"
	for _, first := range answerSeeds[:3] {
		r := bufio.NewReaderSize(strings.NewReader(first+next), 1024)
		for i, want := range []string{"", "next"} {
			_, _ = r.Peek(1)
			resp, err := readResponse(r, &http.Request{Method: http.MethodGet})
			if err != nil {
				t.Fatalf("%q: answer %d: %v", first, i, err)
			}
			b, err := io.ReadAll(resp.Body)
			if err != nil || i == 1 && string(b) != want {
				t.Fatalf("%q: answer %d: %q, %v", first, i, b, err)
			}
		}
	}
}

// A request is written as net/http writes it, header order aside.
func TestWriteRequestAsNetHTTP(t *testing.T) {
	for _, body := range []string{"", `{"name":"u","password":"p"}`} {
		method := http.MethodGet
		if body != "" {
			method = http.MethodPost
		}
		mk := func() *http.Request {
			var rd io.Reader
			if body != "" {
				rd = strings.NewReader(body)
			}
			req, err := http.NewRequest(method, "http://console.example:8082/api/monitor/get/lastevents/1700000000000?x=a%20b", rd)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "tok\r\nen")
			req.Header.Set("Monitor-Target-Host", " node-1 ")
			req.Header["Bad Name"] = []string{"v"}
			req.Header.Set("User-Agent", "indexima_exporter/test")
			return req
		}
		var want, got bytes.Buffer
		if err := mk().Write(&want); err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(&got)
		if err := writeRequest(w, mk()); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		if a, b := sortedLines(want.String()), sortedLines(got.String()); a != b {
			t.Fatalf("%s request:\nnet/http:\n%s\nours:\n%s", method, want.String(), got.String())
		}
	}
}

// sortedLines is a request's head lines sorted (header order is free),
// then its body.
func sortedLines(s string) string {
	head, body, _ := strings.Cut(s, "\r\n\r\n")
	lines := strings.Split(head, "\r\n")
	first, rest := lines[0], lines[1:]
	for i := 1; i < len(rest); i++ {
		for j := i; j > 0 && rest[j] < rest[j-1]; j-- {
			rest[j], rest[j-1] = rest[j-1], rest[j]
		}
	}
	return first + "\n" + strings.Join(rest, "\n") + "\n\n" + body
}

// The answers of a console are parsed here, not by net/http (which
// FuzzReadResponse compares them with); odd ones are left to net/http.
func TestPlainHeadsAreParsedHere(t *testing.T) {
	for i, answer := range answerSeeds {
		head, _, _ := strings.Cut(answer, "\r\n\r\n")
		_, ok := parseHead([]byte(head+"\r\n"), &http.Request{Method: http.MethodGet})
		plain := i <= 10 || i == 15 // the rest: bare LF, folded, two lengths, gzip, HTTP/2, garbage
		if ok != plain {
			t.Errorf("answer %d %q: parsed here %t, want %t", i, head, ok, plain)
		}
	}
}
