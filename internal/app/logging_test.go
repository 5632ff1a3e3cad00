package app

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

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
