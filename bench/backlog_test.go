package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// backlogNode is the one node of the catch-up scenario.
var backlogNode = simulator.NodeConfig{Host: "busy-node", Port: 9999}

// backlog is a busy node's day of events after an outage, as the simulator
// serves it: the first-contact listing (taken before the outage), then the
// lastevents listing from that cursor and its event/count, recorded once
// so that the timed loop measures the exporter only, not the simulator's
// encoding. The bodies are plain JSON (a console answer the client must
// accept; gzip is measured by the harness, not here).
type backlog struct {
	events int
	cursor int64             // `last` of the first contact
	last   int64             // `last` of the backlog listing
	files  map[string]string // request path -> recorded body file
	bytes  int64             // size of the backlog listing
	// gzipped: the backlog listing as the simulator compresses it, served
	// instead of the plain one when set (the path a real console takes).
	gzipFile  string
	gzipBytes int64
	useGzip   bool
}

// recordBacklog runs the simulator once: first contact, then n events over
// the next 24 hours (all completed), and records the answers the exporter
// will ask for.
func recordBacklog(tb testing.TB, n int) *backlog {
	tb.Helper()
	start := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	clock := simulator.NewManualClock(start)
	sim := simulator.New(simulator.Config{Nodes: []simulator.NodeConfig{backlogNode}, Clock: clock, Seed: 7})
	if err := sim.Start("127.0.0.1:0"); err != nil {
		tb.Fatal(err)
	}
	defer sim.Close()
	dir := tb.TempDir()
	bl := &backlog{events: n, files: map[string]string{}}
	// Plain answers: a transport that does not ask for gzip.
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 5 * time.Minute}
	record := func(path string) []byte {
		req, err := http.NewRequest(http.MethodGet, sim.URL()+path, nil)
		if err != nil {
			tb.Fatal(err)
		}
		req.Header.Set("Monitor-Target-Host", backlogNode.Host)
		req.Header.Set("Monitor-Target-Port", strconv.Itoa(backlogNode.Port))
		resp, err := client.Do(req)
		if err != nil {
			tb.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			tb.Fatalf("recording %s: status %d, err %v: %.200s", path, resp.StatusCode, err, body)
		}
		file := filepath.Join(dir, fmt.Sprintf("answer-%d.json", len(bl.files)))
		if err := os.WriteFile(file, body, 0o600); err != nil {
			tb.Fatal(err)
		}
		bl.files[path] = file
		return body
	}

	first := record("/api/monitor/get/events")
	var head struct {
		Last     int64             `json:"last"`
		Runnings []json.RawMessage `json:"runnings"`
	}
	if err := json.Unmarshal(first, &head); err != nil {
		tb.Fatal(err)
	}
	if len(head.Runnings) != 0 {
		tb.Fatalf("first contact lists %d running events; the scenario wants none", len(head.Runnings))
	}
	bl.cursor = head.Last
	record("/api/monitor/get/version")

	// The day's events, evenly spread and all completed by the end.
	key := backlogNode.Key()
	tables, indexes := sim.Tables(key), sim.Indexes(key)
	const span = int64(24 * time.Hour / time.Millisecond)
	evs := make([]simulator.Event, 0, 4096)
	flush := func() { sim.Append(key, evs...); evs = evs[:0] }
	for i := range n {
		e := simulator.Event{Type: simulator.EventTypes[i%len(simulator.EventTypes)],
			Date: bl.cursor + 1 + int64(i)*span/int64(n), Duration: int64(10 + i%400)}
		switch e.Type {
		case simulator.TableLoaded:
			e.Comment = tables[i%len(tables)]
		case simulator.HyperIndexLoaded, simulator.HyperIndexUnloaded:
			e.Comment = indexes[i%len(indexes)]
		case simulator.NodeDown:
			e.Comment = strconv.Itoa(2 + i%3)
		case simulator.SaveMetadata, simulator.PreloadFinished:
			e.Comment = strconv.Itoa(i % 7)
		}
		evs = append(evs, e)
		if len(evs) == cap(evs) {
			flush()
		}
	}
	flush()
	clock.Set(time.UnixMilli(bl.cursor + span + 60_000))

	body := record("/api/monitor/get/lastevents/" + strconv.FormatInt(bl.cursor, 10))
	bl.bytes = int64(len(body))
	i := bytes.LastIndex(body, []byte(`"last":`))
	if i < 0 {
		tb.Fatal("the backlog listing has no last")
	}
	j := bytes.IndexByte(body[i:], '}')
	last, err := strconv.ParseInt(string(body[i+len(`"last":`):i+j]), 10, 64)
	if err != nil {
		tb.Fatal(err)
	}
	bl.last = last
	// The same listing compressed, as a console sends it.
	gzPath := "/api/monitor/get/lastevents/" + strconv.FormatInt(bl.cursor, 10)
	req, err := http.NewRequest(http.MethodGet, sim.URL()+gzPath, nil)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Accept-Encoding", "gzip")
	req.Header.Set("Monitor-Target-Host", backlogNode.Host)
	req.Header.Set("Monitor-Target-Port", strconv.Itoa(backlogNode.Port))
	resp, err := client.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	gz, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.Header.Get("Content-Encoding") != "gzip" {
		tb.Fatalf("recording the gzip listing: %v, encoding %q", err, resp.Header.Get("Content-Encoding"))
	}
	bl.gzipFile, bl.gzipBytes = filepath.Join(dir, "backlog.json.gz"), int64(len(gz))
	if err := os.WriteFile(bl.gzipFile, gz, 0o600); err != nil {
		tb.Fatal(err)
	}
	count := record(fmt.Sprintf("/api/monitor/get/event/count/%d/%d", bl.cursor, bl.last))
	if got := string(bytes.TrimSpace(count)); got != strconv.Itoa(n) {
		tb.Fatalf("event/count says %s, want %d", got, n)
	}
	return bl
}

// replay serves the recorded answers on loopback. Any other request is
// refused (404), which makes the node down and the benchmark fail: the
// catch-up must need exactly these calls.
func (bl *backlog) replay(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		file, ok := bl.files[r.URL.Path]
		if !ok {
			http.Error(w, `{"message":"not recorded: `+r.URL.Path+`"}`, http.StatusNotFound)
			return
		}
		if bl.useGzip && strings.HasPrefix(r.URL.Path, "/api/monitor/get/lastevents/") {
			file = bl.gzipFile
			w.Header().Set("Content-Encoding", "gzip")
		}
		f, err := os.Open(file)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer f.Close()
		st, _ := f.Stat()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.FormatInt(st.Size(), 10))
		_, _ = io.Copy(w, f) // sendfile: the body never enters this process's heap
	})}
	go func() { _ = srv.Serve(ln) }()
	tb.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}
