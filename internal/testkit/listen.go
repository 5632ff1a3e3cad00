package testkit

import (
	"errors"
	"fmt"
	"regexp"
	"time"
)

// listeningRE matches the line exporter-toolkit's web.Serve logs (logfmt)
// with the address its listener really bound: `msg="Listening on"
// address=127.0.0.1:PORT`, other fields possibly between (Prometheus 3 puts
// component=web there). The exporter, Prometheus 2 and 3, Alertmanager and
// json_exporter all serve through it.
var listeningRE = regexp.MustCompile(`msg="Listening on"[^\n]*? address="?([^"\s]+)`)

// ListeningAddress returns the address in the first "Listening on" line of
// log, if any.
func ListeningAddress(log string) (string, bool) {
	m := listeningRE.FindStringSubmatch(log)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// WaitListening waits until log (a child process's captured output, read
// again at every poll) holds the "Listening on" line, and returns the
// address it names. It fails when exited is closed first (the process ended)
// or after within.
//
// Start the process with its listen address on port 0 and read the port it
// got here: a port found free by listening on :0 and closing the listener
// can be taken by any parallel test before the process binds it; the port
// the process bound itself is its own.
func WaitListening(log func() string, exited <-chan struct{}, within time.Duration) (string, error) {
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if addr, ok := ListeningAddress(log()); ok {
			return addr, nil
		}
		select {
		case <-exited:
			return "", errors.New("the process ended before it logged the address it listens on")
		case <-deadline.C:
			return "", fmt.Errorf("no \"Listening on\" line logged within %s", within)
		case <-tick.C:
		}
	}
}
