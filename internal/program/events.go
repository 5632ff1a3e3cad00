package program

import (
	"os/signal"
	"syscall"

	"github.com/go-kit/log"

	"github.com/indexima-exporter/indexima_exporter/eventlog"
)

// openEventLog opens --events.log. On the standard output, a reader that
// goes away (a closed pipe) must fail the writes, which the event log
// survives, not end the exporter: SIGPIPE, which Go lets end a program
// whose write to its standard output fails so, is ignored.
func (p *program) openEventLog(logger log.Logger) (*eventlog.Log, error) {
	o := p.o
	if o.eventLog == "-" {
		signal.Ignore(syscall.SIGPIPE)
	}
	return eventlog.Open(eventlog.Options{Path: o.eventLog, MaxSize: int64(o.eventLogSize), MaxBackups: o.eventLogKeep,
		Logger: logger, Stdout: p.stdout})
}
