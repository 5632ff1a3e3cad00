package apiclient

import (
	"net"
	"strconv"
	"time"
)

// DefaultNodePort is the default monitoring port of a node (spec section 8).
const DefaultNodePort = 9999

// Node names one node of the cluster: the host and monitoring port sent in the
// Monitor-Target-Host / Monitor-Target-Port headers.
type Node struct {
	Host string
	Port int // 0 means DefaultNodePort
}

// String returns host:port, the default label value of a node.
func (n Node) String() string {
	p := n.Port
	if p == 0 {
		p = DefaultNodePort
	}
	return net.JoinHostPort(n.Host, strconv.Itoa(p))
}

// ListingInfo is what remains of a streamed listing once its events have been
// handed to the event.Handler.
type ListingInfo struct {
	Last     int64
	HasLast  bool
	Reqs     int // number of events delivered from reqs
	Runnings int // number of events delivered from runnings
}

// VersionInfo is the answer of get/version. Its shape is undocumented: Version
// holds the version string when one could be found (bare JSON string, or an
// object's "version" field), Raw the body text (bounded) for display.
type VersionInfo struct {
	Version string
	Raw     string
}

// ColumnsInfo is the answer of get/columns/:table. Its shape is undocumented:
// Columns holds column names when the body is an array of names or of objects
// with a name; Count is the number of columns found, or -1 when unknown.
type ColumnsInfo struct {
	Columns []string
	Count   int
	Raw     string
}

// Observer receives the client's own instrumentation. Endpoint values are a
// fixed, small set (see the Endpoint* constants); code is the HTTP status code
// as a decimal string, or "error" when no status was received.
type Observer interface {
	ObserveRequest(endpoint, code string, d time.Duration)
	// ObserveLogin reports each login made, once: LoginSuccess,
	// LoginFailure (bad credentials) or LoginError.
	ObserveLogin(result string)
	// ObserveLoginSkipped reports a call that needed a login while the
	// backoff after a failed one was in force: no login was made, and the
	// call failed at once with that login's error.
	ObserveLoginSkipped()
}

// Endpoint label values reported to the Observer and named in errors.
const (
	EndpointLogin      = "login"
	EndpointVersion    = "version"
	EndpointColumns    = "columns"
	EndpointLastEvents = "lastevents"
	EndpointEventAsc   = "event_asc"
	EndpointEventDesc  = "event_desc"
	EndpointEventCount = "event_count"
)

// Login results reported to the Observer.
const (
	LoginSuccess = "success"
	LoginFailure = "failure" // credentials refused
	LoginError   = "error"   // console unreachable, malformed answer
)
