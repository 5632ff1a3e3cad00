package testkit

import (
	"errors"
	"fmt"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/child"
)

// ListeningAddress returns the address in the first "Listening on" line of
// log, if any (child.ListeningAddress).
func ListeningAddress(log string) (string, bool) { return child.ListeningAddress(log) }

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
