package eventlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/indexima-exporter/indexima_exporter/event"
	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// flakyWriter fails its writes while broken; a write may also take only
// part of what it is given before failing (a disk that fills mid-write).
type flakyWriter struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	broken  bool
	partial int // bytes the next failing write takes before failing
	writes  int
}

func (w *flakyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	if w.broken {
		n := min(w.partial, len(p))
		w.partial = 0
		w.buf.Write(p[:n])
		return n, errors.New("no space left on device")
	}
	return w.buf.Write(p)
}

func (w *flakyWriter) set(broken bool, partial int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.broken, w.partial = broken, partial
}

// events makes n events of one poll, dated from date on.
func events(n int, date int64) []tracker.CountedEvent {
	out := make([]tracker.CountedEvent, n)
	for i := range out {
		out[i] = tracker.CountedEvent{Event: event.Event{Type: "HYPER_INDEX_LOADED", Date: date + int64(i), Duration: int64(i),
			HasDuration: true, Comment: fmt.Sprintf("index_%d", i)}, Nth: 1}
	}
	return out
}

// readLines parses a log: the ids of its whole lines, in order, and the
// lines that are not JSON (what a failed write may leave).
func readLines(t *testing.T, b []byte) (ids []string, bad []string) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.ID == "" {
			bad = append(bad, sc.Text())
			continue
		}
		ids = append(ids, l.ID)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Errorf("the log does not end with a whole line")
	}
	return ids, bad
}

// A write that fails loses nothing: the lines wait, the state file is not
// saved meanwhile, and once writes work again every line is written once,
// in order. A write cut mid-line leaves that part alone on its line.
func TestFailedWritesKeepTheLines(t *testing.T) {
	w := &flakyWriter{}
	l := newLog("", w, nil, Options{})
	var want []string
	poll := func(evs []tracker.CountedEvent) {
		t.Helper()
		if err := l.WriteEvents(ref, evs); err != nil {
			t.Fatalf("WriteEvents: %v", err)
		}
		for _, c := range evs {
			want = append(want, ID(ref, c))
		}
	}
	poll(events(3, 1000))
	saved := 0
	if !l.WhileWritten(func() { saved++ }) || saved != 1 {
		t.Fatalf("everything written: the state file must be saved (ran %d times)", saved)
	}

	w.set(true, 30) // broken, the first failing write takes 30 bytes
	poll(events(4, 2000))
	poll(events(2, 3000))
	if st := l.Stats(); st.Pending != 6 || st.Failures == 0 || st.Written != 3 {
		t.Fatalf("while writes fail: %+v, want 6 pending, failures counted, 3 written", st)
	}
	if l.WhileWritten(func() { saved++ }) || saved != 1 {
		t.Fatalf("lines pending: the state file must not be saved")
	}

	w.set(false, 0)
	poll(events(1, 4000))
	if st := l.Stats(); st.Pending != 0 || st.Written != 10 {
		t.Fatalf("after writes work again: %+v, want none pending and 10 written", st)
	}
	if !l.WhileWritten(func() { saved++ }) || saved != 2 {
		t.Fatalf("everything written again: the state file must be saved")
	}
	ids, bad := readLines(t, w.buf.Bytes())
	if strings.Join(ids, ",") != strings.Join(want, ",") {
		t.Errorf("lines written:\n%v\nwant, in order:\n%v", ids, want)
	}
	if len(bad) != 1 || len(bad[0]) != 30 {
		t.Errorf("the cut write should leave its 30 bytes alone on a line; lines that do not parse: %q", bad)
	}
}

// The lines waiting for a failed write are bounded: beyond MaxPending a
// poll's events are refused (the poll is read again later), and taken again
// once the log can be written.
func TestPendingLinesAreBounded(t *testing.T) {
	w := &flakyWriter{}
	l := newLog("", w, nil, Options{})
	w.set(true, 0)
	date := int64(0)
	for l.Stats().Pending+500 <= MaxPending {
		if err := l.WriteEvents(ref, events(500, date)); err != nil {
			t.Fatalf("refused at %d pending lines: %v", l.Stats().Pending, err)
		}
		date += 500
	}
	if err := l.WriteEvents(ref, events(500, date)); err == nil {
		t.Fatalf("%d lines pending: a poll of 500 more was taken", l.Stats().Pending)
	}
	pending := l.Stats().Pending
	w.set(false, 0)
	if err := l.WriteEvents(ref, events(500, date)); err != nil {
		t.Fatalf("writes work again: %v", err)
	}
	if st := l.Stats(); st.Pending != 0 || st.Written != uint64(pending)+500 {
		t.Fatalf("after the backlog: %+v, want %d written", st, pending+500)
	}
	ids, bad := readLines(t, w.buf.Bytes())
	if len(ids) != int(pending)+500 || len(bad) != 0 {
		t.Errorf("%d lines, %d bad; want %d", len(ids), len(bad), pending+500)
	}
}

// The file rotates at its size and keeps MaxBackups rotated files: the log
// never takes more than MaxSize × (MaxBackups+1), and holds the latest
// lines whole.
func TestRotationBoundsTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.log")
	const mib = 1 << 20
	l, err := Open(Options{Path: path, MaxSize: mib, MaxBackups: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// About 8 MiB of lines, in polls of 1000 events.
	var last string
	for i := 0; l.Stats().Written*150 < 8*mib && i < 1000; i++ {
		evs := events(1000, int64(i)*1000)
		if err := l.WriteEvents(ref, evs); err != nil {
			t.Fatal(err)
		}
		last = ID(ref, evs[len(evs)-1])
	}
	if st := l.Stats(); st.Failures != 0 || st.Pending != 0 {
		t.Fatalf("writes failed: %+v", st)
	}
	files := func() (n int, size int64) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			info, err := e.Info()
			if err != nil {
				continue // removed meanwhile
			}
			n++
			size += info.Size()
		}
		return n, size
	}
	// Old files are removed in the background after a rotation.
	testkit.WaitFor(t, "at most 3 files of the event log", func() bool { n, _ := files(); return n <= 3 })
	n, size := files()
	if n < 2 || size > 3*mib {
		t.Fatalf("%d files, %d bytes: want the current file and its backups, at most 3 MiB in all", n, size)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if info, _ := e.Info(); info.Size() > mib {
			t.Errorf("%s: %d bytes, more than the rotation size", e.Name(), info.Size())
		}
		ids, bad := readLines(t, b)
		if len(bad) != 0 || len(ids) == 0 {
			t.Errorf("%s: %d lines, %d that do not parse", e.Name(), len(ids), len(bad))
		}
		if e.Name() == "events.log" && ids[len(ids)-1] != last {
			t.Errorf("the current file does not end with the latest event")
		}
	}
}

// Standard output: no rotation, the lines as they come.
func TestStdout(t *testing.T) {
	var out bytes.Buffer
	l, err := Open(Options{Path: "-", Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	evs := events(2, 5)
	if err := l.WriteEvents(ref, evs); err != nil {
		t.Fatal(err)
	}
	ids, bad := readLines(t, out.Bytes())
	if len(ids) != 2 || ids[0] != ID(ref, evs[0]) || len(bad) != 0 {
		t.Errorf("stdout holds %q", out.String())
	}
	if !l.WhileWritten(func() {}) {
		t.Error("nothing pending on stdout, and the state file is not saved")
	}
}

// A path that cannot be written stops the start with one line naming the
// flag and the path.
func TestOpenRefusesAnUnwritablePath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "events.log")
	_, err := Open(Options{Path: path, MaxSize: 1, MaxBackups: 1})
	if err == nil || !strings.Contains(err.Error(), "--events.log") || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "\n") {
		t.Errorf("Open(%s): %v", path, err)
	}
}

// A log file removed by hand does not stop the state file's saves: the next
// save starts a new file, and the lines after it go there.
func TestRemovedFileIsStartedAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.log")
	l, err := Open(Options{Path: path, MaxSize: 1 << 20, MaxBackups: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.WriteEvents(ref, events(2, 0)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	saved := false
	if !l.WhileWritten(func() { saved = true }) || !saved {
		t.Fatal("the state file is not saved after the log file was removed")
	}
	evs := events(3, 100)
	if err := l.WriteEvents(ref, evs); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no new log file: %v", err)
	}
	ids, bad := readLines(t, b)
	if len(ids) != 3 || ids[0] != ID(ref, evs[0]) || len(bad) != 0 {
		t.Errorf("the new file holds %q", b)
	}
}
