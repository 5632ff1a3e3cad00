package program

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
)

func TestLoggersShareFormatAndLevel(t *testing.T) {
	var buf bytes.Buffer
	logger, slogger := newLoggers(&buf, "warn", "json")
	level.Info(logger).Log("msg", "hidden")
	level.Warn(logger).Log("msg", "from go-kit")
	slogger.Info("hidden too")
	slogger.Error("from slog", "address", "127.0.0.1:1")

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want the warn and error lines only, got:\n%s", buf.String())
	}
	for i, want := range []struct{ msg, level string }{{"from go-kit", "warn"}, {"from slog", "error"}} {
		var rec map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &rec); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i, err, lines[i])
		}
		if rec["msg"] != want.msg || rec["level"] != want.level || rec["ts"] == nil || rec["caller"] == nil {
			t.Errorf("line %d = %v, want msg %q, level %q, ts and caller", i, rec, want.msg, want.level)
		}
		if c, _ := rec["caller"].(string); !strings.HasPrefix(c, "logging_test.go:") {
			t.Errorf("caller = %q, want the call site in logging_test.go", c)
		}
	}

	buf.Reset()
	logger, _ = newLoggers(&buf, "debug", "logfmt")
	level.Debug(logger).Log("msg", "shown")
	if !strings.Contains(buf.String(), `level=debug`) || !strings.Contains(buf.String(), `msg=shown`) {
		t.Errorf("logfmt debug line = %q", buf.String())
	}
}

// A line below the level costs no caller (a walk of the stack): the filter
// drops it before the valuers run. A line at the level, through loggers
// made with log.With as the poller's are, names its call site.
func TestLoggerFiltersBeforeTheCaller(t *testing.T) {
	calls := 0
	saved := callSite
	defer func() { callSite = saved }()
	callSite = func() any { calls++; return saved() }

	var buf bytes.Buffer
	logger, _ := newLoggers(&buf, "info", "logfmt")
	nodeLogger := log.With(log.With(logger, "component", "poller"), "node", "n1")
	level.Debug(nodeLogger).Log("msg", "console request")
	if calls != 0 || buf.Len() != 0 {
		t.Fatalf("a debug line at level info took the caller %d times and wrote %q", calls, buf.String())
	}
	level.Warn(nodeLogger).Log("msg", "poll failed")
	if calls != 1 {
		t.Fatalf("a warn line took the caller %d times, want 1", calls)
	}
	if !strings.Contains(buf.String(), "caller=logging_test.go:") || !strings.Contains(buf.String(), "node=n1") {
		t.Errorf("line = %q, want the call site in logging_test.go and the node", buf.String())
	}
}

// logfmtKeys are the keys of a logfmt line, in order (values may be quoted).
func logfmtKeys(line string) []string {
	var keys []string
	for i := 0; i < len(line); {
		for i < len(line) && line[i] == ' ' {
			i++
		}
		start := i
		for i < len(line) && line[i] != '=' && line[i] != ' ' {
			i++
		}
		if i > start {
			keys = append(keys, line[start:i])
		}
		if i < len(line) && line[i] == '=' {
			i++
			if i < len(line) && line[i] == '"' {
				for i++; i < len(line) && line[i] != '"'; i++ {
					if line[i] == '\\' {
						i++
					}
				}
				i++
			}
			for i < len(line) && line[i] != ' ' {
				i++
			}
		}
	}
	return keys
}

// Every logfmt line has one field order, whichever logger wrote it: the
// exporter's (go-kit, with a context such as component and node) and the
// libraries' through the slog bridge (exporter-toolkit's "Listening on"):
// ts, caller, level, msg, then the others as given.
func TestEveryLogLineHasOneFieldOrder(t *testing.T) {
	var buf bytes.Buffer
	logger, slogger := newLoggers(&buf, "debug", "logfmt")
	level.Info(log.With(logger, "component", "poller", "node", "n1")).Log("msg", "polled", "calls", 2)
	slogger.Info("Listening on", "address", "127.0.0.1:1")
	slogger.With("component", "web").Warn("TLS is disabled.", "http2", false)
	want := [][]string{
		{"ts", "caller", "level", "msg", "component", "node", "calls"},
		{"ts", "caller", "level", "msg", "address"},
		{"ts", "caller", "level", "msg", "component", "http2"},
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), buf.String())
	}
	for i, line := range lines {
		if got := strings.Join(logfmtKeys(line), " "); got != strings.Join(want[i], " ") {
			t.Errorf("line %q: fields %s, want %s", line, got, strings.Join(want[i], " "))
		}
	}

	// The program's own lines at a start, the toolkit's among them.
	r := start(t, "--demo")
	r.waitFor("/-/ready", func(body string) bool { return strings.Contains(body, "Ready") }, "ready")
	r.stop()
	n, toolkit := 0, false
	for _, line := range strings.Split(strings.TrimSpace(r.stderr.String()), "\n") {
		n++
		toolkit = toolkit || strings.Contains(line, `msg="Listening on"`)
		if keys := logfmtKeys(line); len(keys) < 4 || strings.Join(keys[:4], " ") != "ts caller level msg" {
			t.Errorf("line %q starts with %v, want ts caller level msg", line, keys[:min(4, len(keys))])
		}
	}
	if n < 3 || !toolkit {
		t.Errorf("%d lines, the toolkit's \"Listening on\" among them %v:\n%s", n, toolkit, r.stderr)
	}
}
