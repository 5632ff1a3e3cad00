package simulator

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

const lastPath = "/api/monitor/get/lastevents/0"

func TestFaultStatusCountAndScope(t *testing.T) {
	s, _ := newTestSim(t, Config{})
	tok := login(t, s)
	s.SetNodeFault(nodeA, Fault{Status: 502, Count: 2})
	for i := 0; i < 2; i++ {
		a := call(t, s, lastPath, reqOpts{token: tok, node: nodeA, gzip: true})
		var m struct{ Message string }
		if a.status != 502 || json.Unmarshal(a.body, &m) != nil || m.Message == "" {
			t.Fatalf("call %d: %d %s", i, a.status, a.body)
		}
		if b := call(t, s, lastPath, reqOpts{token: tok, node: nodeB}); b.status != 200 {
			t.Fatalf("node-b affected by node-a's fault: %d", b.status)
		}
	}
	if a := call(t, s, lastPath, reqOpts{token: tok, node: nodeA}); a.status != 200 {
		t.Fatalf("fault outlived its Count: %d", a.status)
	}
	// A console fault hits login too; a node fault is not consulted for it.
	s.SetConsoleFault(Fault{Status: 503})
	a := call(t, s, "/api/login", reqOpts{method: http.MethodPost, body: `{"name":"monitor","password":"s3cret"}`})
	if a.status != 503 {
		t.Errorf("login under a console fault: %d", a.status)
	}
	s.ClearFaults()
	if a := call(t, s, lastPath, reqOpts{token: tok, node: nodeB}); a.status != 200 {
		t.Errorf("after ClearFaults: %d", a.status)
	}
}

// decodeListing tries the client's job: gunzip (if sent so) and decode a
// listing with reqs, runnings and last.
func decodeListing(a answer) error {
	var l struct {
		Reqs     *[]json.RawMessage
		Runnings *[]json.RawMessage
		Last     *int64
	}
	if err := json.Unmarshal(a.body, &l); err != nil {
		return err
	}
	if l.Reqs == nil || l.Last == nil {
		return errors.New("not a listing")
	}
	return nil
}

// rawCall is call without failing on a bad gzip stream.
func rawCall(t *testing.T, s *Simulator, tok string, gz bool) (answer, error) {
	t.Helper()
	req, _ := http.NewRequest("GET", s.URL()+lastPath, nil)
	req.Header.Set("Authorization", tok)
	req.Header.Set("Monitor-Target-Host", "node-a")
	req.Header.Set("Monitor-Target-Port", "9999")
	if gz {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	resp, err := rawClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	wire, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	a := answer{status: resp.StatusCode, header: resp.Header, body: wire, wire: wire}
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(wire))
		if err != nil {
			return a, err
		}
		a.body, err = io.ReadAll(zr)
		return a, err
	}
	return a, nil
}

func TestBadBodies(t *testing.T) {
	s, _ := newTestSim(t, Config{})
	tok := login(t, s)
	for _, gz := range []bool{true, false} {
		s.SetNodeFault(nodeA, Fault{Body: BodyMalformedJSON, Count: 1})
		a, err := rawCall(t, s, tok, gz)
		var syn *json.SyntaxError
		if err != nil || a.status != 200 || !errors.As(decodeListing(a), &syn) || !bytes.HasPrefix(a.body, []byte(`{"reqs":[{`)) {
			t.Errorf("malformed (gzip %v): %d %v %.60s", gz, a.status, err, a.body)
		}

		s.SetNodeFault(nodeA, Fault{Body: BodyTruncatedGzip, Count: 1})
		a, err = rawCall(t, s, tok, gz)
		if gz && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("truncated gzip: err %v, want unexpected EOF", err)
		}
		if !gz && (err != nil || decodeListing(a) == nil) {
			t.Errorf("truncated plain body decoded: %v %s", err, a.body)
		}

		s.SetNodeFault(nodeA, Fault{Body: BodyWrongShape, Count: 1})
		a, err = rawCall(t, s, tok, gz)
		if err != nil || !json.Valid(a.body) || decodeListing(a) == nil {
			t.Errorf("wrong shape: %v %s", err, a.body)
		}

		s.SetNodeFault(nodeA, Fault{Body: BodyHTML, Count: 1})
		a, err = rawCall(t, s, tok, gz)
		if err != nil || a.status != 200 || !strings.HasPrefix(a.header.Get("Content-Type"), "text/html") ||
			!bytes.Contains(a.body, []byte("<html>")) {
			t.Errorf("html: %d %q %s", a.status, a.header.Get("Content-Type"), a.body)
		}

		s.SetNodeFault(nodeA, Fault{Body: BodyMessage, Count: 1})
		a, err = rawCall(t, s, tok, gz)
		var m map[string]any
		if err != nil || a.status != 200 || json.Unmarshal(a.body, &m) != nil || len(m) != 1 || m["message"] == nil {
			t.Errorf("message: %d %s", a.status, a.body)
		}
	}
	if a, err := rawCall(t, s, tok, true); err != nil || decodeListing(a) != nil {
		t.Errorf("after the faults: %v %s", err, a.body)
	}
}

func TestBombExpandsHugely(t *testing.T) {
	s, _ := newTestSim(t, Config{})
	tok := login(t, s)
	s.SetNodeFault(nodeA, Fault{Body: BodyBomb})
	req, _ := http.NewRequest("GET", s.URL()+lastPath, nil)
	req.Header.Set("Authorization", tok)
	req.Header.Set("Monitor-Target-Host", "node-a")
	req.Header.Set("Monitor-Target-Port", "9999")
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := rawClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("bomb: %d %v", resp.StatusCode, resp.Header)
	}
	wire := &countingReader{r: resp.Body}
	zr, err := gzip.NewReader(wire)
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 9)
	if _, err := io.ReadFull(zr, head); err != nil || string(head) != `{"reqs":[` {
		t.Fatalf("bomb does not look like a listing: %q %v", head, err)
	}
	const want = 256 << 20
	n, err := io.Copy(io.Discard, io.LimitReader(zr, want))
	if err != nil || n != want {
		t.Fatalf("expanded only %d bytes: %v", n, err)
	}
	if wire.n > want/200 {
		t.Errorf("%d compressed bytes for %d expanded: not a bomb", wire.n, want)
	}
}

func TestBombTrailerCRC(t *testing.T) {
	// The combined CRC must equal the CRC of the concatenation.
	a := bytes.Repeat([]byte("ab"), 5000)
	b := bytes.Repeat([]byte(" "), 70001)
	if got, want := crc32Combine(crc32.ChecksumIEEE(a), crc32.ChecksumIEEE(b), int64(len(b))),
		crc32.ChecksumIEEE(append(append([]byte{}, a...), b...)); got != want {
		t.Errorf("crc32Combine = %08x, want %08x", got, want)
	}
}

func TestBombTrailerCRCRepeat(t *testing.T) {
	// The CRC of a head and n copies of a segment equals the CRC of the
	// concatenation, as the bomb's trailer needs.
	a := bytes.Repeat([]byte("ab"), 5000)
	b := bytes.Repeat([]byte(" "), 70001)
	all := append([]byte{}, a...)
	for n := range 5 {
		if got, want := crc32Repeat(crc32.ChecksumIEEE(a), crc32.ChecksumIEEE(b), int64(len(b)), n),
			crc32.ChecksumIEEE(all); got != want {
			t.Errorf("%d copies: crc32Repeat = %08x, want %08x", n, got, want)
		}
		all = append(all, b...)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestEndlessBody(t *testing.T) {
	s, _ := newTestSim(t, Config{})
	tok := login(t, s)
	s.SetNodeFault(nodeA, Fault{Body: BodyEndless})
	req, _ := http.NewRequest("GET", s.URL()+lastPath, nil)
	req.Header.Set("Authorization", tok)
	req.Header.Set("Monitor-Target-Host", "node-a")
	req.Header.Set("Monitor-Target-Port", "9999")
	resp, err := rawClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, io.LimitReader(resp.Body, 32<<20))
	resp.Body.Close()
	if err != nil || n != 32<<20 {
		t.Fatalf("endless body ended after %d bytes: %v", n, err)
	}
	// The server goroutine stops once the client is gone: Close returns.
	done := make(chan error, 1)
	go func() { done <- s.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Close blocked by an endless body")
	}
}

func TestLatencyAndHang(t *testing.T) {
	s, _ := newTestSim(t, Config{})
	tok := login(t, s)
	s.SetNodeFault(nodeA, Fault{Latency: 5 * time.Millisecond, Count: 1})
	if a := call(t, s, lastPath, reqOpts{token: tok, node: nodeA}); a.status != 200 || decodeListing(a) != nil {
		t.Errorf("a small latency must still answer: %d %s", a.status, a.body)
	}
	for _, f := range []Fault{{Latency: time.Hour}, {Hang: true}} {
		s.SetNodeFault(nodeA, f)
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "GET", s.URL()+lastPath, nil)
		req.Header.Set("Authorization", tok)
		req.Header.Set("Monitor-Target-Host", "node-a")
		req.Header.Set("Monitor-Target-Port", "9999")
		before := s.Stats().NodeRequests[nodeA]
		errc := make(chan error, 1)
		go func() {
			resp, err := rawClient.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			errc <- err
		}()
		testkit.WaitFor(t, "the request to arrive", func() bool { return s.Stats().NodeRequests[nodeA] > before })
		select {
		case err := <-errc:
			t.Fatalf("%+v: answered (%v) instead of holding the request", f, err)
		default:
		}
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("%+v: %v", f, err)
		}
	}
	// Close releases a hanging request.
	s.SetConsoleFault(Fault{Hang: true})
	errc := make(chan error, 1)
	go func() {
		resp, err := rawClient.Get(s.URL() + versionPath)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	testkit.WaitFor(t, "the request to arrive", func() bool { return s.Stats().Requests["version"] > 0 })
	go func() { _ = s.Close() }() // its error is TestEndlessBody's check; here, only the release
	select {
	case err := <-errc:
		// Released: with an error (the connection closed) or an answer,
		// either will do.
		t.Logf("the hanging request returned: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("Close did not release a hanging request")
	}
}

func TestConsoleDownAndBack(t *testing.T) {
	s, _ := newTestSim(t, Config{})
	tok := login(t, s)
	url := s.URL()
	addr := strings.TrimPrefix(url, "http://")
	s.SetConsoleFault(Fault{Down: true})
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err == nil {
		conn.Close()
		t.Fatal("console down, yet a connection was accepted")
	}
	var op *net.OpError
	if !errors.As(err, &op) || !strings.Contains(err.Error(), "refused") {
		t.Errorf("want connection refused, got %v", err)
	}
	s.ClearFaults()
	if s.URL() != url {
		t.Fatalf("URL changed from %s to %s", url, s.URL())
	}
	if a := call(t, s, lastPath, reqOpts{token: tok, node: nodeA}); a.status != 200 {
		t.Fatalf("after the console is back: %d", a.status)
	}
	// A console fault without Down also brings it back.
	s.SetConsoleFault(Fault{Down: true})
	s.SetConsoleFault(Fault{Status: 500, Count: 1})
	if a := call(t, s, lastPath, reqOpts{token: tok, node: nodeA}); a.status != 500 {
		t.Errorf("after SetConsoleFault without Down: %d", a.status)
	}
}
