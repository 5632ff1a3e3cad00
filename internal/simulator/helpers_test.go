package simulator

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// t0 is the start of every test clock: mid-morning, so the initial history
// fits in the day.
var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

const (
	testUser = "monitor"
	testPass = "s3cret"
	nodeA    = "node-a:9999"
	nodeB    = "node-b:9999"
)

// newTestSim starts a simulator on loopback with a ManualClock at t0, two
// nodes and one user unless cfg says otherwise.
func newTestSim(t testing.TB, cfg Config) (*Simulator, *ManualClock) {
	t.Helper()
	clk, _ := cfg.Clock.(*ManualClock)
	if clk == nil {
		clk = NewManualClock(t0)
		cfg.Clock = clk
	}
	if cfg.Nodes == nil {
		cfg.Nodes = []NodeConfig{{Host: "node-a"}, {Host: "node-b", Port: 9999}}
	}
	if cfg.Users == nil {
		cfg.Users = map[string]string{testUser: testPass}
	}
	s := New(cfg)
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, clk
}

// rawClient does not decompress, so tests see what the server sent.
var rawClient = &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 30 * time.Second}

type answer struct {
	status int
	header http.Header
	body   []byte // decompressed when Content-Encoding is gzip
	wire   []byte // as sent
}

type reqOpts struct {
	method string
	token  string
	node   string // "host:port"; "" = no node headers
	gzip   bool
	body   string
}

func call(t testing.TB, s *Simulator, path string, o reqOpts) answer {
	t.Helper()
	if o.method == "" {
		o.method = http.MethodGet
	}
	req, err := http.NewRequest(o.method, s.URL()+path, strings.NewReader(o.body))
	if err != nil {
		t.Fatal(err)
	}
	if o.token != "" {
		req.Header.Set("Authorization", o.token)
	}
	if o.node != "" {
		host, port, _ := strings.Cut(o.node, ":")
		req.Header.Set("Monitor-Target-Host", host)
		req.Header.Set("Monitor-Target-Port", port)
	}
	if o.gzip {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	if o.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := rawClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", o.method, path, err)
	}
	defer resp.Body.Close()
	wire, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", o.method, path, err)
	}
	a := answer{status: resp.StatusCode, header: resp.Header, body: wire, wire: wire}
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(wire))
		if err != nil {
			t.Fatalf("%s: bad gzip: %v", path, err)
		}
		if a.body, err = io.ReadAll(zr); err != nil {
			t.Fatalf("%s: bad gzip: %v", path, err)
		}
	}
	return a
}

func login(t testing.TB, s *Simulator) string {
	t.Helper()
	a := call(t, s, "/api/login", reqOpts{method: http.MethodPost,
		body: `{"name":"` + testUser + `","password":"` + testPass + `"}`})
	if a.status != http.StatusOK {
		t.Fatalf("login: status %d: %s", a.status, a.body)
	}
	var sess struct{ ID string }
	if err := json.Unmarshal(a.body, &sess); err != nil || sess.ID == "" {
		t.Fatalf("login: bad answer %s (%v)", a.body, err)
	}
	return sess.ID
}

type wireEvent struct {
	Type     string  `json:"type"`
	Date     int64   `json:"date"`
	Duration *int64  `json:"duration"`
	Comment  *string `json:"comment"`
}

type wireListing struct {
	Reqs     []wireEvent `json:"reqs"`
	Runnings []wireEvent `json:"runnings"`
	Last     *int64      `json:"last"`
}

// listing GETs path on node (token from login) and decodes a listing.
func listing(t testing.TB, s *Simulator, token, node, path string) wireListing {
	t.Helper()
	a := call(t, s, path, reqOpts{token: token, node: node, gzip: true})
	if a.status != http.StatusOK {
		t.Fatalf("%s: status %d: %s", path, a.status, a.body)
	}
	var l wireListing
	dec := json.NewDecoder(bytes.NewReader(a.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		t.Fatalf("%s: not a listing: %v: %s", path, err, a.body)
	}
	if l.Reqs == nil || l.Runnings == nil || l.Last == nil {
		t.Fatalf("%s: listing misses reqs, runnings or last: %s", path, a.body)
	}
	for _, e := range append(append([]wireEvent{}, l.Reqs...), l.Runnings...) {
		if e.Comment == nil {
			t.Fatalf("%s: event without comment: %s", path, a.body)
		}
	}
	return l
}

// comments lists the comments of evs, the tests' way to name events.
func comments(evs []wireEvent) []string {
	out := []string{}
	for _, e := range evs {
		out = append(out, *e.Comment)
	}
	return out
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func sameStrings(a, b []string) bool {
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
