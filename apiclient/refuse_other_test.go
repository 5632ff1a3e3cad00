//go:build !unix

package apiclient

import (
	"net"
	"testing"
)

// refusingURL returns the URL of a loopback listener that stays open for the
// test (so that no other test can take its port) and resets every
// connection at once, the nearest to a console that is down without the
// bound, never-listening socket used on unix.
func refusingURL(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return // closed at the test's end
			}
			_ = c.(*net.TCPConn).SetLinger(0) // close with a reset
			_ = c.Close()
		}
	}()
	return "http://" + l.Addr().String()
}
