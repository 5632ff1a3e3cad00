package simulator

import (
	"context"
	"io"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// canHoldPort: on Linux the console's port is held while it is Down.
const canHoldPort = true

// listenShared listens on addr with SO_REUSEPORT, so that holdPort's socket
// can bind the same port beside it, and the listener bind it again beside
// that socket. Other sockets cannot share the port: SO_REUSEPORT binds it
// only beside sockets that set it too, of the same user, and the kernel
// never picks a bound port for port 0 nor an outgoing connection.
func listenShared(addr string) (net.Listener, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
		}); err != nil {
			return err
		}
		return serr
	}}
	return lc.Listen(context.Background(), "tcp", addr)
}

// holdPort binds a TCP socket to a (a listenShared listener's address) and
// never listens on it: connections to the port are refused, and the port
// stays the simulator's until the socket is closed.
func holdPort(a *net.TCPAddr) (io.Closer, error) {
	var sa unix.Sockaddr
	family := unix.AF_INET6
	if ip4 := a.IP.To4(); ip4 != nil {
		family = unix.AF_INET
		sa4 := &unix.SockaddrInet4{Port: a.Port}
		copy(sa4.Addr[:], ip4)
		sa = sa4
	} else {
		sa6 := &unix.SockaddrInet6{Port: a.Port}
		copy(sa6.Addr[:], a.IP.To16())
		if a.Zone != "" {
			if ifi, err := net.InterfaceByName(a.Zone); err == nil {
				sa6.ZoneId = uint32(ifi.Index)
			}
		}
		sa = sa6
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return heldPort(fd), nil
}

type heldPort int

func (h heldPort) Close() error { return unix.Close(int(h)) }
