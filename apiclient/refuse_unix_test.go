//go:build unix

package apiclient

import (
	"errors"
	"net"
	"strconv"
	"syscall"
	"testing"
)

// refusingURL returns the URL of a loopback port that refuses every
// connection at once (ECONNREFUSED, as a console that is down) and that no
// other listener can take while the test runs: a socket is bound to it and
// never listens. Closing a listener and handing its port back would let a
// parallel test's listener (any package's) take the port meanwhile.
func refusingURL(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	syscall.CloseOnExec(fd)
	t.Cleanup(func() { _ = syscall.Close(fd) })
	// No SO_REUSEADDR: no other socket may bind the port, and the kernel
	// skips it when it picks a port for a listener or an outgoing connection.
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	in4, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		t.Fatalf("bound to %T", sa)
	}
	return "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(in4.Port))
}

// TestRefusingURL: the address refuses connections and cannot be taken by a
// listener, which is what the tests using it rely on.
func TestRefusingURL(t *testing.T) {
	addr := refusingURL(t)[len("http://"):]
	_, err := net.Dial("tcp", addr)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial %s: %v, want connection refused", addr, err)
	}
	if l, err := net.Listen("tcp", addr); err == nil {
		l.Close()
		t.Fatalf("a listener could take %s", addr)
	}
}
