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
		Names: p.downNodeName, Logger: logger, Stdout: p.stdout})
}

// downNodeName names the node a NODE_DOWN event reports, from the cluster
// and its comment (the node's number), for the event log and /events (an
// eventlog.DownNodeNamer). The configuration does not give the nodes'
// numbers yet, so no name is known and the lines carry the number alone
// (down_node). Once it does, the configuration in force
// (p.reloader.Config(), which follows reloads) maps the number of one of
// the cluster's nodes to that node's name here.
func (p *program) downNodeName(cluster, number string) (string, bool) {
	return "", false
}
