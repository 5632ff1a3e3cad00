package testkit

import (
	"strings"
	"testing"
	"time"
)

// The line as each program that the tests start logs it.
func TestListeningAddress(t *testing.T) {
	for _, c := range []struct{ name, log, want string }{
		{"indexima_exporter", `time=2026-01-02T03:04:05.000Z level=INFO source=tls_config.go:380 msg="starting"` + "\n" +
			`time=2026-01-02T03:04:05.000Z level=INFO source=tls_config.go:381 msg="Listening on" address=127.0.0.1:41234` + "\n", "127.0.0.1:41234"},
		{"prometheus 2", `ts=2026-11-24T20:59:19.372Z caller=web.go:503 level=info component=web msg="Start listening for connections" address=127.0.0.1:0` + "\n" +
			`ts=2026-11-24T20:59:19.385Z caller=tls_config.go:232 level=info component=web msg="Listening on" address=127.0.0.1:44089` + "\n", "127.0.0.1:44089"},
		{"prometheus 3", `time=2026-11-24T20:59:28.064Z level=INFO source=tls_config.go:381 msg="Listening on" component=web address=127.0.0.1:33977` + "\n", "127.0.0.1:33977"},
		{"ipv6", `level=info msg="Listening on" address=[::1]:9100` + "\n", "[::1]:9100"},
	} {
		got, ok := ListeningAddress(c.log)
		if !ok || got != c.want {
			t.Errorf("%s: %q %v, want %q", c.name, got, ok, c.want)
		}
	}
	// The configured address (port 0) is not the one bound.
	if got, ok := ListeningAddress(`msg="Start listening for connections" address=127.0.0.1:0` + "\n"); ok {
		t.Errorf("took %q from a line that is not the listener's", got)
	}
}

func TestWaitListening(t *testing.T) {
	exited := make(chan struct{})
	polls := 0
	log := func() string { // the line comes at the third poll
		if polls++; polls < 3 {
			return "level=info msg=starting\n"
		}
		return "level=info msg=starting\n" + `level=info msg="Listening on" address=127.0.0.1:5555` + "\n"
	}
	if addr, err := WaitListening(log, exited, WaitTimeout); err != nil || addr != "127.0.0.1:5555" || polls != 3 {
		t.Fatalf("%q %v after %d polls", addr, err, polls)
	}
	close(exited)
	if _, err := WaitListening(func() string { return "" }, exited, WaitTimeout); err == nil || !strings.Contains(err.Error(), "ended") {
		t.Errorf("after the exit: %v", err)
	}
	if _, err := WaitListening(func() string { return "" }, nil, 30*time.Millisecond); err == nil || !strings.Contains(err.Error(), "within") {
		t.Errorf("without the line: %v", err)
	}
}
