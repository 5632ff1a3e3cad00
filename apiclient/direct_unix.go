//go:build unix

package apiclient

import (
	"errors"
	"net"
	"syscall"
)

// stillOpen tells whether an idle connection can carry a request: nothing
// to read on it (the console closed it: end of file; or it sent something
// unasked, such as a TLS alert) and no error. One non-blocking peek, so
// that a request is not written into a connection already closed, which
// for a request that cannot be sent again would be an error.
func stillOpen(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	open := false
	var buf [1]byte
	err = rc.Read(func(fd uintptr) bool {
		_, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		open = errors.Is(rerr, syscall.EAGAIN) || errors.Is(rerr, syscall.EWOULDBLOCK)
		return true // done, whatever the answer: never wait
	})
	return err == nil && open
}
