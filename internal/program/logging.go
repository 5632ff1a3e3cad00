package program

import (
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
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
		base = fieldOrder{log.NewLogfmtLogger(log.NewSyncWriter(w))}
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
	// The filter outermost, so that a line below the level is dropped
	// before its timestamp and caller are taken: the debug line of every
	// console call would take a caller (a walk of the stack) at every
	// level. With the filter between the call site and
	// the valuers, the depth of the call site varies: callSite looks for it.
	return level.NewFilter(log.With(base, "ts", log.DefaultTimestampUTC, "caller", callSite), allow), slogger
}

// fieldOrder writes the fields of every logfmt line in one order, whichever
// logger made it: ts, caller, level, msg, then the others as given (the
// logger's context, such as component and node, then the call's). Left
// alone, go-kit writes ts and caller, then level, the context and msg, and
// the slog bridge (exporter-toolkit's lines) level, caller, time and msg.
// (The JSON logger sorts its keys.)
type fieldOrder struct{ next log.Logger }

// firstFields are the keys every line starts with, in this order.
var firstFields = [...]string{"ts", "caller", "level", "msg"}

func (l fieldOrder) Log(kv ...any) error {
	out := make([]any, 0, len(kv)+1)
	var taken [len(firstFields)]int // index+1 in kv of each first field's pair
	for f, key := range firstFields {
		for i := 0; i+1 < len(kv); i += 2 {
			if k, ok := kv[i].(string); ok && k == key {
				out = append(out, kv[i], kv[i+1])
				taken[f] = i + 1
				break
			}
		}
	}
	for i := 0; i < len(kv); i += 2 {
		first := false
		for _, t := range taken {
			first = first || t == i+1
		}
		if !first {
			out = append(out, kv[i:min(i+2, len(kv))]...)
		}
	}
	return l.next.Log(out...)
}

// callSite is log.DefaultCaller for a logger whose valuers are not called
// by the call site's context directly: the file:line of the first frame
// outside go-kit's log packages.
var callSite log.Valuer = func() any {
	var pcs [16]uintptr
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs[:])])
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, "github.com/go-kit/log") {
			return filepath.Base(f.File) + ":" + strconv.Itoa(f.Line)
		}
		if !more {
			return "unknown"
		}
	}
}
