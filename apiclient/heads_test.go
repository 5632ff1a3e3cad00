package apiclient

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"reflect"
	"strings"
	"testing"
	"time"
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
	"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
	strings.Repeat("HTTP/1.1 100 Continue\r\n\r\n", 7) + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 401 Unauthorized\r\nx-lower-case: v\r\nContent-Length: 3\r\n\r\nno!",
	"HTTP/1.1 200\r\nContent-Length: 1\r\n\r\n1",
	"HTTP/1.1 200 OK\nContent-Length: 1\n\n1",
	"HTTP/1.1 200 OK\r\nFolded: a\r\n b\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
	"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
	"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
	"HTTP/1.1 200 OK\r\nX-Long: " + strings.Repeat("a", maxHeadBytes) + "\r\n\r\n",
	"HTTP/1.1 200 OK\r\n" + strings.Repeat("A: b\r\n", maxHeaderFields+1) + "\r\n",
	"HTTP/2 200 OK\r\n\r\n",
	"HTTP/1.1 abc OK\r\n\r\n",
	"garbage",
	"",
}

// answering dials a connection on which a console reads the request's
// head, then writes answer and hangs up.
func answering(answer []byte) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		client, console := net.Pipe()
		go func() {
			defer console.Close()
			r := textproto.NewReader(bufio.NewReader(console))
			if _, err := r.ReadLine(); err != nil {
				return
			}
			if _, err := r.ReadMIMEHeader(); err != nil {
				return
			}
			_, _ = console.Write(answer)
		}()
		return client, nil
	}
}

// roundTrip sends a request through rt and returns the answer with its
// body read whole.
func roundTrip(t *testing.T, rt http.RoundTripper, method string) (*http.Response, []byte, error, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, "http://console.test/api/get/event/count", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return nil, nil, err, nil
	}
	defer resp.Body.Close()
	b, bodyErr := io.ReadAll(resp.Body)
	return resp, b, nil, bodyErr
}

// The direct transport reads any answer as net/http's transport does,
// bounded alike: the same status, headers and body, or an error for both.
// Where it differs, it is by the bounds net/http does not have: more than
// maxInterimAnswers 1xx answers, or more than maxHeaderFields fields.
func FuzzDirectTransportAsNetHTTP(f *testing.F) {
	for _, s := range answerSeeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, answer []byte, head bool) {
		method := http.MethodGet
		if head {
			method = http.MethodHead
		}
		netHTTP := &http.Transport{DialContext: answering(answer), MaxResponseHeaderBytes: maxHeadBytes,
			DisableCompression: true, MaxIdleConnsPerHost: 1}
		defer netHTTP.CloseIdleConnections()
		direct := &directTransport{fallback: &http.Transport{DialContext: answering(answer),
			MaxIdleConnsPerHost: 1, IdleConnTimeout: time.Minute}, now: time.Now}
		defer direct.CloseIdleConnections()

		want, wantBody, wantErr, wantBodyErr := roundTrip(t, netHTTP, method)
		got, gotBody, gotErr, gotBodyErr := roundTrip(t, direct, method)
		var limit *headLimitError
		if errors.As(gotErr, &limit) && limit != errHeadTooLarge {
			return // a bound of ours that net/http does not have
		}
		if (wantErr != nil) != (gotErr != nil) {
			t.Fatalf("%q: net/http %v, direct %v", answer, wantErr, gotErr)
		}
		if errors.Is(gotErr, errHeadTooLarge) != strings.Contains(errString(wantErr), "exceeded") {
			t.Fatalf("%q: net/http %v, direct %v: not the same bound", answer, wantErr, gotErr)
		}
		if wantErr != nil {
			return
		}
		if got.StatusCode != want.StatusCode || got.Proto != want.Proto || got.Status != want.Status ||
			!reflect.DeepEqual(got.Header, want.Header) {
			t.Fatalf("%q:\nnet/http %d %q %v\ndirect   %d %q %v", answer,
				want.StatusCode, want.Status, want.Header, got.StatusCode, got.Status, got.Header)
		}
		if !bytes.Equal(wantBody, gotBody) || (wantBodyErr != nil) != (gotBodyErr != nil) {
			t.Fatalf("%q: body: net/http %q %v, direct %q %v", answer, wantBody, wantBodyErr, gotBody, gotBodyErr)
		}
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Two answers on one kept connection: the second is read where the first
// ended, whatever the first's framing, and the head bound starts again.
func TestDirectReadsTheNextAnswerWhereTheFirstEnded(t *testing.T) {
	next := "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nnext"
	for _, first := range answerSeeds[:3] {
		client, console := net.Pipe()
		go func() {
			defer console.Close()
			r := textproto.NewReader(bufio.NewReader(console))
			for _, answer := range []string{first, next} {
				if _, err := r.ReadLine(); err != nil {
					return
				}
				if _, err := r.ReadMIMEHeader(); err != nil {
					return
				}
				// A head of most of the bound each: together over it.
				answer = strings.Replace(answer, "\r\n\r\n", "\r\nX-Pad: "+strings.Repeat("p", maxHeadBytes*3/4)+"\r\n\r\n", 1)
				if _, err := console.Write([]byte(answer)); err != nil {
					return
				}
			}
		}()
		dialed := 0
		direct := &directTransport{fallback: &http.Transport{
			DialContext: func(context.Context, string, string) (net.Conn, error) {
				if dialed++; dialed > 1 {
					return nil, errors.New("dialed again: the connection was not kept")
				}
				return client, nil
			},
			MaxIdleConnsPerHost: 1, IdleConnTimeout: time.Minute}, now: time.Now}
		for i, want := range []string{"", "next"} {
			_, b, err, bodyErr := roundTrip(t, direct, http.MethodGet)
			if err != nil || bodyErr != nil || i == 1 && string(b) != want {
				t.Fatalf("%q: answer %d: %q, %v, %v", first, i, b, err, bodyErr)
			}
		}
		direct.CloseIdleConnections()
	}
}
