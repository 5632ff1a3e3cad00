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
