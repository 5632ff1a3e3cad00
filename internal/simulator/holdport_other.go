//go:build !linux

package simulator

import (
	"errors"
	"io"
	"net"
)

// canHoldPort: elsewhere than on Linux the port is released while the
// console is Down, and listened on again when it comes back.
const canHoldPort = false

func listenShared(string) (net.Listener, error) {
	return nil, errors.New("simulator: holding a port is only done on Linux")
}

func holdPort(*net.TCPAddr) (io.Closer, error) {
	return nil, errors.New("simulator: holding a port is only done on Linux")
}
