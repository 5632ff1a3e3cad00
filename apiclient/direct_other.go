//go:build !unix

package apiclient

import "net"

// stillOpen cannot peek here, so it does not vouch for any idle
// connection: only a request that can be sent again reuses one, and only
// within peekAfter of its last use (a poll's second call); a console that
// closed it is met by sending the request again on a new connection.
func stillOpen(net.Conn) bool { return false }
