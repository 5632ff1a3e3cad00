package app

import (
	"io"
	"log/slog"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	sloggokit "github.com/tjhop/slog-gokit"
)

// newLoggers returns the exporter's go-kit logger and, for the libraries
// that want *slog.Logger (exporter-toolkit), a bridge writing through the
// same go-kit output so both share format, filter and destination.
func newLoggers(w io.Writer, lvl, format string) (log.Logger, *slog.Logger) {
	var base log.Logger
	if format == "json" {
		base = log.NewJSONLogger(log.NewSyncWriter(w))
	} else {
		base = log.NewLogfmtLogger(log.NewSyncWriter(w))
	}
	var allow level.Option
	var slogLevel slog.Level
	switch lvl {
	case "debug":
		allow, slogLevel = level.AllowDebug(), slog.LevelDebug
	case "warn":
		allow, slogLevel = level.AllowWarn(), slog.LevelWarn
	case "error":
		allow, slogLevel = level.AllowError(), slog.LevelError
	default:
		allow, slogLevel = level.AllowInfo(), slog.LevelInfo
	}
	// The slog bridge adds its own time and caller from the slog record;
	// its "time" key becomes our "ts", in UTC, so every line looks alike.
	fromSlog := log.LoggerFunc(func(kv ...any) error {
		for i := 0; i+1 < len(kv); i += 2 {
			if k, ok := kv[i].(string); ok && k == slog.TimeKey {
				kv[i] = "ts"
				if t, ok := kv[i+1].(time.Time); ok {
					kv[i+1] = t.UTC()
				}
			}
		}
		return base.Log(kv...)
	})
	slogger := slog.New(sloggokit.NewGoKitHandler(level.NewFilter(fromSlog, allow), slogLevel))
	// With outermost, so the caller valuer counts frames from the call site.
	return log.With(level.NewFilter(base, allow), "ts", log.DefaultTimestampUTC, "caller", log.DefaultCaller), slogger
}
