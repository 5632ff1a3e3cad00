package bench

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// backlogNode is the one node of the catch-up scenario.
var backlogNode = simulator.NodeConfig{Host: "busy-node", Port: 9999}

// backlog is a busy node's day of events after an outage, as the simulator
// serves it: every answer an exporter needs to make first contact and then
// read the backlog, recorded once (through a recording proxy, while a real
// exporter did it) so that the timed loop measures the exporter only, not
// the simulator's encoding. The bodies are plain JSON (a console answer the
// client must accept; gzip is measured by the harness, not here).
type backlog struct {
	events int
	start  int64             // the console's clock at first contact, Unix ms: the backlog comes after it
	files  map[string]string // request path -> recorded body file
	dates  map[string]string // request path -> recorded Date header (the console's clock, which first contact reads)
	bytes  int64             // size of the backlog listing
	// listing is the path of the backlog listing; gzipped is the same
	// listing compressed as the simulator sends it, served instead of the
	// plain one when useGzip is set (the path a real console takes).
	listing   string
	gzipFile  string
	gzipBytes int64
	useGzip   bool
	// contact holds the paths of first contact's calls. First contact
	// derives its times from the console's clock as the exporter reads it
	// (the Date header plus the local time since), so a loaded machine asks
	// for ranges a few ms off the recorded ones (whose answers may differ)
	// or makes a call the recording did not (a count of one millisecond
	// its pages moved past): such a call is answered by a simulator as it
	// stood at first contact (the same seed and clock), which answers any
	// range exactly.
	contact map[string]bool
}

// backlogSimulator is the simulator of the catch-up scenario at clock.
func backlogSimulator(clock simulator.Clock) *simulator.Simulator {
	return simulator.New(simulator.Config{Nodes: []simulator.NodeConfig{backlogNode}, Clock: clock, Seed: 7})
}

// recorder is a proxy in front of the simulator that keeps every answer
// (plain: it asks the simulator without gzip) and its Date header by
// request path.
type recorder struct {
	sim   http.Handler
	dir   string
	mu    sync.Mutex
	files map[string]string
	dates map[string]string
	sizes map[string]int64
	n     int // answers recorded (names the files)
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.Header.Del("Accept-Encoding")
	cw := httptest.NewRecorder()
	rec.sim.ServeHTTP(cw, r)
	body := cw.Body.Bytes()
	rec.mu.Lock()
	rec.n++
	file := filepath.Join(rec.dir, fmt.Sprintf("answer-%d.json", rec.n))
	if err := os.WriteFile(file, body, 0o600); err == nil {
		rec.files[r.URL.Path], rec.sizes[r.URL.Path] = file, int64(len(body))
		rec.dates[r.URL.Path] = cw.Header().Get("Date")
	}
	rec.mu.Unlock()
	for k, v := range cw.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(cw.Code)
	_, _ = w.Write(body)
}

// recordBacklog runs the simulator once: a real exporter makes first
// contact, the node then logs n events over the next 24 hours (all
// completed), and the exporter reads them; every answer is recorded.
func recordBacklog(tb testing.TB, n int) *backlog {
	tb.Helper()
	start := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	clock := simulator.NewManualClock(start)
	sim := backlogSimulator(clock)
	dir := tb.TempDir()
	rec := &recorder{sim: sim.Handler(), dir: dir, files: map[string]string{}, dates: map[string]string{}, sizes: map[string]int64{}}
	srv := httptest.NewServer(rec)
	defer srv.Close()

	c := newCatchUp(tb, srv.URL)
	bl := &backlog{events: n, start: clock.Now().UnixMilli(), files: map[string]string{}, dates: map[string]string{}, contact: map[string]bool{}}
	keep := func() {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		for path, file := range rec.files {
			bl.files[path], bl.dates[path] = file, rec.dates[path]
		}
		clear(rec.files)
	}
	keep()
	for path := range bl.files {
		bl.contact[path] = true
	}

	// The day's events, evenly spread and all completed by the end.
	key := backlogNode.Key()
	tables, indexes := sim.Tables(key), sim.Indexes(key)
	const span = int64(24 * time.Hour / time.Millisecond)
	evs := make([]simulator.Event, 0, 4096)
	flush := func() { sim.Append(key, evs...); evs = evs[:0] }
	for i := range n {
		e := simulator.Event{Type: simulator.EventTypes[i%len(simulator.EventTypes)],
			Date: bl.start + 1 + int64(i)*span/int64(n), Duration: int64(10 + i%400)}
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
	clock.Set(time.UnixMilli(bl.start + span + 60_000))

	if up, counted := c.scrape(tb); up != 1 || counted != float64(n) {
		tb.Fatalf("recording the catch-up: up %v, counted %v; want 1 and %d", up, counted, n)
	}
	for path := range rec.files {
		if strings.HasPrefix(path, "/api/monitor/get/lastevents/") && rec.sizes[path] > bl.bytes {
			bl.listing, bl.bytes = path, rec.sizes[path]
		}
	}
	keep()
	if bl.listing == "" {
		tb.Fatal("the catch-up made no lastevents call")
	}

	// The same listing compressed, as a console sends it.
	req, err := http.NewRequest(http.MethodGet, bl.listing, nil)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Accept-Encoding", "gzip")
	req.Header.Set("Monitor-Target-Host", backlogNode.Host)
	req.Header.Set("Monitor-Target-Port", strconv.Itoa(backlogNode.Port))
	w := httptest.NewRecorder()
	sim.Handler().ServeHTTP(w, req)
	if w.Header().Get("Content-Encoding") != "gzip" {
		tb.Fatalf("recording the gzip listing: encoding %q", w.Header().Get("Content-Encoding"))
	}
	bl.gzipFile, bl.gzipBytes = filepath.Join(dir, "backlog.json.gz"), int64(w.Body.Len())
	if err := os.WriteFile(bl.gzipFile, w.Body.Bytes(), 0o600); err != nil {
		tb.Fatal(err)
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
	atContact := backlogSimulator(simulator.NewManualClock(time.UnixMilli(bl.start))).Handler()
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := bl.recorded(r.URL.Path)
		if path != r.URL.Path && (path == "" || bl.contact[path]) && bl.ofFirstContact(r.URL.Path) {
			r.Header.Del("Accept-Encoding")
			atContact.ServeHTTP(w, r)
			return
		}
		file, ok := bl.files[path]
		if !ok {
			http.Error(w, `{"message":"not recorded: `+r.URL.Path+`"}`, http.StatusNotFound)
			return
		}
		// The console's clock as it was (first contact asks for times
		// derived from it), not this server's.
		if d := bl.dates[path]; d != "" {
			w.Header().Set("Date", d)
		}
		if bl.useGzip && path == bl.listing {
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

// recorded is the recorded path a request stands for: the same, or one of
// the same endpoint whose times differ by less than clockSlackMS. The
// exporter reads the console's clock as the Date header plus the time
// elapsed since the answer came (apiclient.ConsoleClock), so the times it
// derives from it (first contact's listing, the end of a count) move by the
// milliseconds a busy machine takes between two calls.
func (bl *backlog) recorded(path string) string {
	if _, ok := bl.files[path]; ok {
		return path
	}
	want := strings.Split(path, "/")
	best, bestDiff := "", int64(clockSlackMS)
	for p := range bl.files {
		got := strings.Split(p, "/")
		if len(got) != len(want) {
			continue
		}
		diff := int64(0)
		for i := range got {
			if got[i] == want[i] {
				continue
			}
			a, errA := strconv.ParseInt(got[i], 10, 64)
			b, errB := strconv.ParseInt(want[i], 10, 64)
			if errA != nil || errB != nil {
				diff = clockSlackMS
				break
			}
			diff = max(diff, a-b, b-a)
		}
		if diff < bestDiff {
			best, bestDiff = p, diff
		}
	}
	return best
}

const clockSlackMS = 10_000

// ofFirstContact tells a path whose times are all first contact's: at most
// a day past the console's clock then (its counts reach that far ahead);
// the catch-up's counts reach a day past the end of the backlog.
func (bl *backlog) ofFirstContact(path string) bool {
	for _, seg := range strings.Split(path, "/") {
		if ms, err := strconv.ParseInt(seg, 10, 64); err == nil && ms > bl.start+25*3600*1000 {
			return false
		}
	}
	return true
}
