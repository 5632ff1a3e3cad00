package eventlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"gopkg.in/natefinch/lumberjack.v2"

	"github.com/indexima-exporter/indexima_exporter/internal/fserr"
	"github.com/indexima-exporter/indexima_exporter/poller"
	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// Options of an event log.
type Options struct {
	// Path is the file, or "-" for the standard output (no rotation).
	Path string
	// MaxSize is the size at which the file is rotated, in bytes, rounded
	// up to a MiB (at least 1 MiB); MaxBackups how many rotated files are
	// kept (at least 1). The log takes at most MaxSize × (MaxBackups+1).
	MaxSize    int64
	MaxBackups int
	Logger     log.Logger
	// Stdout is the standard output, for Path "-".
	Stdout io.Writer
}

// MaxPending bounds the lines waiting for a write that failed. Beyond it a
// poll's events are refused: the poll is not applied, and its events are
// read again from the console once the log can be written, so that none is
// skipped and memory stays bounded.
const MaxPending = 100_000

// keptBuffer bounds the buffer of lines kept between writes.
const keptBuffer = 1 << 20

// chunkSize bounds one write: whole lines up to this many bytes (or one
// line, if longer), so that no write can exceed the rotation size.
const chunkSize = 64 << 10

// Log is an event log: WriteEvents (a poller.EventWriter) writes the lines of
// each poll's events at once; WhileWritten lets the state file be saved
// only when every line was written.
type Log struct {
	path   string // "" for the standard output
	logger log.Logger

	mu     sync.Mutex
	out    io.Writer
	closer io.Closer          // nil for the standard output
	file   *lumberjack.Logger // nil for the standard output
	// buf[off:] holds the whole lines not written yet, oldest first; lines
	// counts them.
	buf   []byte
	off   int
	lines int
	// partial is set when a failed write left part of a line in the file:
	// the next write ends it first, so that the line after it is whole.
	partial bool
	failing bool // the latest write failed (logged once until one succeeds)
	// unsynced is set when lines were written since the file was last
	// synced (WhileWritten syncs it before the state file is saved).
	unsynced bool
	// enc writes each line, as encoding/json writes Line (HTML left
	// unescaped), at the end of buf.
	enc *json.Encoder

	written, failures atomic.Uint64 // lines written; failed writes
	waiting           atomic.Int64  // lines pending
}

var _ poller.EventWriter = (*Log)(nil)

// Open opens the log: a file is created if needed (mode 0644, less the
// umask; rotated files keep its mode) and checked writable now, so that a
// bad path stops the start rather than the first poll.
func Open(o Options) (*Log, error) {
	if o.Path == "-" {
		if o.Stdout == nil {
			o.Stdout = os.Stdout
		}
		return newLog("", o.Stdout, nil, o), nil
	}
	if o.MaxBackups < 1 || o.MaxSize < 1 {
		return nil, errors.New("--events.log: the rotation needs a size and at least one rotated file to keep")
	}
	f, err := os.OpenFile(o.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--events.log %q: cannot write there: %v", o.Path, fserr.Bare(err))
	}
	f.Close()
	const mib = 1 << 20
	lj := &lumberjack.Logger{Filename: o.Path, MaxSize: int((o.MaxSize + mib - 1) / mib), MaxBackups: o.MaxBackups}
	l := newLog(filepath.Clean(o.Path), lj, lj, o)
	l.file = lj
	return l, nil
}

func newLog(path string, out io.Writer, closer io.Closer, o Options) *Log {
	if o.Logger == nil {
		o.Logger = log.NewNopLogger()
	}
	l := &Log{path: path, logger: o.Logger, out: out, closer: closer}
	l.enc = json.NewEncoder(appender{&l.buf})
	l.enc.SetEscapeHTML(false)
	return l
}

// errFull is WriteEvents's error when the pending lines are at their bound.
var errFull = fmt.Errorf("the event log cannot be written and holds %d lines already", MaxPending)

// WriteEvents writes the lines of a poll's events (poller.EventWriter). A write
// that fails keeps them pending, to be written first at the next attempt;
// only when the pending lines are at their bound does it refuse them.
func (l *Log) WriteEvents(n poller.NodeRef, evs []tracker.CountedEvent) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lines > 0 && l.lines+len(evs) > MaxPending {
		if !l.flush() {
			return errFull
		}
	}
	start := len(l.buf)
	for _, c := range evs {
		if err := l.enc.Encode(LineOf(n, c)); err != nil {
			// Not expected (a Line holds nothing JSON cannot): the poll is
			// not applied, and its events come again with the next one.
			l.buf = l.buf[:start]
			return err
		}
	}
	l.lines += len(evs)
	l.flush()
	return nil
}

// flush writes the pending lines and reports whether all were written.
// l.mu must be held.
func (l *Log) flush() bool {
	defer func() { l.waiting.Store(int64(l.lines)) }()
	for l.off < len(l.buf) {
		if l.partial {
			if _, err := l.out.Write([]byte{'\n'}); err != nil {
				l.failed(err)
				return false
			}
			l.partial = false
		}
		pending := l.buf[l.off:]
		chunk := pending[:lineChunk(pending)]
		n, err := l.out.Write(chunk)
		// The whole lines written leave pending, however the write ended.
		done := bytes.LastIndexByte(chunk[:n], '\n') + 1
		lines := bytes.Count(chunk[:done], []byte{'\n'})
		l.off += done
		l.lines -= lines
		l.written.Add(uint64(lines))
		if done > 0 {
			l.unsynced = true
		}
		if err == nil && n < len(chunk) {
			err = io.ErrShortWrite
		}
		if err != nil {
			l.partial = n > done
			l.failed(err)
			return false
		}
	}
	// All written: the buffer is reused, unless a backlog made it large.
	l.buf, l.off = l.buf[:0], 0
	if cap(l.buf) > keptBuffer {
		l.buf = nil
	}
	if l.failing {
		l.failing = false
		level.Info(l.logger).Log("msg", "the event log is written again; the lines kept meanwhile are written", "file", l.name())
	}
	return true
}

// lineChunk returns how many bytes of p the next write takes: whole lines
// up to chunkSize bytes, or the first line if it is longer.
func lineChunk(p []byte) int {
	if len(p) <= chunkSize {
		return len(p)
	}
	if i := bytes.LastIndexByte(p[:chunkSize], '\n'); i >= 0 {
		return i + 1
	}
	return bytes.IndexByte(p, '\n') + 1
}

// failed counts and logs a write that failed (once until one succeeds).
func (l *Log) failed(err error) {
	l.failures.Add(1)
	if !l.failing {
		l.failing = true
		level.Error(l.logger).Log("msg", "cannot write the event log; its lines are kept and written at the next attempt, and the state file is not saved until then",
			"file", l.name(), "pending", l.lines, "err", fserr.Bare(err))
	}
}

func (l *Log) name() string {
	if l.path == "" {
		return "-"
	}
	return l.path
}

// WhileWritten writes the pending lines and, if none is left, syncs the
// file and runs save with no event counted meanwhile: a state saved by
// save then holds no event the log does not. It reports whether save ran.
func (l *Log) WhileWritten(save func()) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.flush() {
		return false
	}
	if l.unsynced && l.path != "" {
		// Written is not yet on disk: a state file synced before the log
		// would, after a power loss, hold events the log lost.
		err := syncFile(l.path)
		if errors.Is(err, fs.ErrNotExist) && l.file != nil {
			// Removed by hand: the lines went to the removed file, and the
			// next would too. A new file is started, or no sync would ever
			// succeed again and the state file would never be saved.
			level.Warn(l.logger).Log("msg", "the event log file was removed; a new one is started", "file", l.name())
			err = l.file.Rotate()
		}
		if err != nil {
			l.failed(err)
			return false
		}
	}
	l.unsynced = false
	save()
	return true
}

// syncFile flushes the file at path to disk (Linux syncs a file's data
// whichever descriptor asks).
func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Close writes what is pending, if it can, and closes the file.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.flush() {
		level.Error(l.logger).Log("msg", "event log lines not written at shutdown; with --events.state-file they are counted and written again at the next start",
			"file", l.name(), "lines", l.lines)
	}
	if l.closer != nil {
		return l.closer.Close()
	}
	return nil
}

// Stats are what the log wrote.
type Stats struct {
	Written  uint64 // lines written
	Failures uint64 // writes that failed
	Pending  int64  // lines waiting for a write
}

// Stats returns what the log wrote so far.
func (l *Log) Stats() Stats {
	return Stats{Written: l.written.Load(), Failures: l.failures.Load(), Pending: l.waiting.Load()}
}

// appender appends what is written to the slice it points to.
type appender struct{ b *[]byte }

func (a appender) Write(p []byte) (int, error) {
	*a.b = append(*a.b, p...)
	return len(p), nil
}
