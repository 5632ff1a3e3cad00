// Package simulator is a simulated cluster console: a real HTTP server that
// speaks the console REST API (docs/console-api.md), with several
// nodes, each with its own event log, a deterministic scenario engine, a
// ground-truth log for tests, and fault injection.
//
// It is used by the tests, the benchmarks and the exporter's --demo mode. It
// deliberately does not import apiclient: the client is proven against the
// protocol, not against itself.
//
// CONTRACT FILE: the exported API below is what other packages code against.
// Bodies are filled in by the simulator's implementation files.
package simulator

import (
	"crypto/tls"
	"net/http"
	"time"

	"github.com/indexima-exporter/indexima_exporter/event"
)

// Event types of spec section 6, as package event lists them: the
// simulator speaks the vocabulary the exporter reads.
const (
	ClusterStart       = event.ClusterStart
	ClusterStop        = event.ClusterStop
	NodeDown           = event.NodeDown
	ClusterInit        = event.ClusterInit
	MemoryLow          = event.MemoryLow
	TableLoaded        = event.TableLoaded
	HyperIndexLoaded   = event.HyperIndexLoaded
	HyperIndexUnloaded = event.HyperIndexUnloaded
	SaveMetadata       = event.SaveMetadata
	PreloadFinished    = event.PreloadFinished
)

// EventTypes lists the ten known types in spec order (event.KnownTypes).
var EventTypes = event.KnownTypes

// Config of a simulated console.
type Config struct {
	// Users maps console user names to passwords. Empty: authentication is
	// disabled (no token needed, as in older releases).
	Users map[string]string
	// TokenLifetime after which a token is refused (simulated clock); 0: never.
	TokenLifetime time.Duration
	// StaticTokens are always accepted and never expire (for tools that cannot
	// log in, such as json_exporter in the comparison harness).
	StaticTokens []string
	// RefusalStatus is the HTTP status of a refused (unauthenticated) call; the
	// body is always {"message": "No session attribute found, ..."}. Default 401.
	// Tests set 403 or 200 to prove the client's tolerance.
	RefusalStatus int
	// SSOProxy answers calls whose token is missing, unknown, expired or
	// revoked as a single-sign-on proxy in front of the console does when
	// its session has expired: SSOLoginPage (200, text/html login page) or
	// SSORedirect (302 to /login), instead of RefusalStatus and a message.
	// Logins still reach the console. Default SSONone.
	SSOProxy SSOMode

	Nodes []NodeConfig
	// Clock drives event dates, durations, `last` and token expiry. Nil: real time.
	Clock Clock
	// Seed of the scenario engine's generator: same seed, same clock steps, same log.
	Seed int64
	// Rate of background events per node per simulated second (0: only scripted
	// and initial events).
	Rate float64
	// Location of the day boundaries of get/events and get/events/:date; default UTC.
	Location *time.Location
	// Readings are the console's choices where the specification leaves
	// one open (readings.go); SetReadings changes them while serving.
	Readings
	// StartedAgo puts each node's initial history (a cluster start, its
	// loads and preload) this long before the clock's time at New, instead
	// of earlier the same day; the initial history spans 20 minutes.
	StartedAgo time.Duration
	// Compact makes JSON answers compact; default is compact too; Pretty: indented.
	Pretty bool
	// TLS, when set, serves the console over HTTPS with this configuration
	// (its certificate). Its NextProtos are the protocols the console
	// offers in ALPN, "h2" and "http/1.1", and the only ones it speaks
	// (empty: both, as net/http's server). Offering only "h2" is a console
	// behind an HTTP/2-only load balancer: a client offering only
	// http/1.1 fails its handshake, one offering none is hung up on.
	TLS *tls.Config
}

// SSOMode is how Config.SSOProxy answers a call with an expired token.
type SSOMode string

const (
	SSONone      SSOMode = ""           // the console's own refusal
	SSOLoginPage SSOMode = "login-page" // 200 with an HTML login page
	SSORedirect  SSOMode = "redirect"   // 302 to /login
)

// NodeConfig is one simulated node.
type NodeConfig struct {
	Host    string // Monitor-Target-Host value
	Port    int    // Monitor-Target-Port value; 0: 9999
	Number  int    // the node's number, as named in NODE_DOWN comments; 0: index+1
	Version string // answer of get/version; default "2024.1.0"
	// ClockOffset is the node's clock against the console's (negative: the
	// node lags). The node dates its events by its own clock and an event
	// becomes visible when the node's clock reaches it; ShiftClock moves the
	// same offset later.
	ClockOffset time.Duration
}

// Key returns "host:port", the key of a node in every method below.
func (n NodeConfig) Key() string { return nodeKey(n.Host, n.Port) }

// Clock is the simulator's time source.
type Clock interface{ Now() time.Time }

// ManualClock is a Clock that only moves when told (tests, soak).
type ManualClock struct{ manualClock }

// NewManualClock returns a clock standing at t.
func NewManualClock(t time.Time) *ManualClock { return newManualClock(t) }

// Event is an event of a node's log, the ground truth.
type Event struct {
	Type     string
	Date     int64 // start, Unix ms
	Duration int64 // ms
	Comment  string
	// CompletedAt = Date+Duration: from then on the event is listed in reqs;
	// before, from Date on, it is listed in runnings (without a duration).
	CompletedAt int64
	Seq         int64 // order of insertion in the node's log
	// Aborted is set for an event a cluster stop aborted while it ran
	// (Readings.AbortOnStop): it never completes (CompletedAt is then the
	// largest int64) and is never listed again.
	Aborted bool
}

// Stats counts what the console saw, for tests and the load harness.
type Stats struct {
	Logins        int            // successful logins
	LoginFailures int            // refused logins
	Refused       int            // calls refused as unauthenticated
	Requests      map[string]int // by endpoint name (login, version, columns, events, events_date, lastevents, event_asc, event_desc, event_count)
	NodeRequests  map[string]int // /api/monitor calls by node key
	Protocols     map[string]int // API calls by protocol as received: HTTP/1.1, HTTP/2.0
	Connections   int            // connections accepted (refused TLS handshakes included)
}

// Fault is injected on a node's calls (SetNodeFault) or on every call,
// login included (SetConsoleFault). Zero fields do nothing.
type Fault struct {
	Latency time.Duration // added before answering
	Hang    bool          // never answer until the client gives up (or Close)
	Status  int           // answer this status (e.g. 502) with a {"message"} body
	Body    BadBody       // answer 200 with a bad body of this kind
	Down    bool          // console only: refuse connections (listener closed, port held on Linux) until cleared
	// Count limits the fault to the next Count matching requests; 0: until cleared.
	Count int
}

// BadBody kinds for Fault.Body.
type BadBody int

const (
	BodyOK            BadBody = iota
	BodyMalformedJSON         // syntax error midway through a listing
	BodyTruncatedGzip         // gzip stream cut short (or plain body cut when gzip not asked)
	BodyWrongShape            // valid JSON of another shape, e.g. {"rows": [...]}
	BodyHTML                  // an HTML error page from a proxy, status 200
	BodyBomb                  // small gzip body that expands to gigabytes
	BodyEndless               // a body that never ends (streams bytes until the client stops)
	BodyMessage               // {"message": "..."} with status 200
)

// ---- Lifecycle (implemented in server.go) ----

// New builds a simulator; nodes get their initial history (a cluster start
// with tables and hyperindexes loaded and PRELOAD_FINISHED earlier in the day).
func New(cfg Config) *Simulator { return newSimulator(cfg) }

// Start listens on addr (use "127.0.0.1:0") and serves until Close.
func (s *Simulator) Start(addr string) error { return s.start(addr) }

// URL is the console base URL, e.g. http://127.0.0.1:34567 (https://
// with Config.TLS).
func (s *Simulator) URL() string { return s.url() }

// Handler serves the console API (for callers that run their own server).
func (s *Simulator) Handler() http.Handler { return s.handler() }

// Close stops the server and releases hanging requests.
func (s *Simulator) Close() error { return s.close() }

// ---- Scenario (implemented in scenario.go) ----

// Append adds events to a node's log as they are given (dates in the past or
// the future are allowed). Dates of 0 mean now.
func (s *Simulator) Append(node string, evs ...Event) { s.appendEvents(node, evs...) }

// ReportNodeDown logs NODE_DOWN on reporter naming down's number, now.
func (s *Simulator) ReportNodeDown(reporter, down string) { s.reportNodeDown(reporter, down) }

// MemoryLowEpisode logs MEMORY_LOW on node then HYPER_INDEX_UNLOADED for each
// index (which must be loaded), now.
func (s *Simulator) MemoryLowEpisode(node string, indexes ...string) {
	s.memoryLowEpisode(node, indexes...)
}

// ReloadIndexes logs HYPER_INDEX_LOADED for each index on node, now.
func (s *Simulator) ReloadIndexes(node string, indexes ...string) { s.reloadIndexes(node, indexes...) }

// StopCluster logs CLUSTER_STOP on every node, now.
func (s *Simulator) StopCluster() { s.stopCluster() }

// StartCluster logs on every node CLUSTER_START, then (over the next
// simulated seconds, as running events that complete later) TABLE_LOADED for
// each table, HYPER_INDEX_LOADED for each index, and PRELOAD_FINISHED with the
// number of indexes loaded.
func (s *Simulator) StartCluster() { s.startCluster() }

// SetRate changes the background rate of events per node per simulated
// second from the next simulated second on (0: only scripted events).
func (s *Simulator) SetRate(r float64) { s.setRate(r) }

// ShiftClock moves a node's clock by d (negative: `last` goes backwards),
// the console's and the other nodes' staying: the node's clock steps alone.
func (s *Simulator) ShiftClock(node string, d time.Duration) { s.shiftClock(node, d) }

// StepClock moves the console's clock by d, on any Clock, and with it every
// node's (they run at their offsets from it): an NTP correction on the
// whole cluster. Its Date headers, `last`, token lifetimes and the nodes'
// event dates follow. Events dated after a node's clock become invisible
// until the clock reaches them again (the simulator's log is a function of
// its nodes' clocks), and no background event is logged for the time a
// clock runs over twice. With a ManualClock, Advance does the same.
func (s *Simulator) StepClock(d time.Duration) { s.clock.step.Add(int64(d)) }

// ---- In-process answers (implemented in direct.go) ----

// Listing is an event listing as the console answers it, without HTTP.
type Listing struct {
	Reqs     []Event // Duration meaningful
	Runnings []Event // Duration not given by the console
	Last     int64
	// Date is the console's clock as its Date header shows it (Unix ms,
	// whole seconds); 0 with Readings.NoDate.
	Date int64
}

// LastEvents answers get/lastevents/:time for node in-process, exactly as
// the HTTP endpoint does (profiles included; faults and auth excluded).
func (s *Simulator) LastEvents(node string, since int64) Listing { return s.directSince(node, since) }

// EventRange answers get/event/asc or get/event/desc in-process.
func (s *Simulator) EventRange(node string, desc bool, start, end int64, limit int) Listing {
	return s.directRange(node, desc, start, end, limit)
}

// EventCount answers get/event/count in-process.
func (s *Simulator) EventCount(node string, start, end int64) int64 {
	return s.directCount(node, start, end)
}

// Truth returns a copy of a node's whole log, ordered by Seq.
func (s *Simulator) Truth(node string) []Event { return s.truth(node) }

// Visible returns the Seq of the node's events a listing can show as
// completed now (completed, not forgotten by retention, not aborted).
func (s *Simulator) Visible(node string) map[int64]bool { return s.visible(node) }

// Countable returns the Seq of the node's events event/count counts now
// (completed ones, and started ones too with CountRunning; not forgotten).
func (s *Simulator) Countable(node string) map[int64]bool { return s.countedNow(node) }

// ConsoleNow is the console's clock, Unix ms.
func (s *Simulator) ConsoleNow() int64 { return s.clock.Now().UnixMilli() }

// ---- Readings (readings.go) ----

// Readings returns the readings in force.
func (s *Simulator) Readings() Readings { return *s.readings() }

// SetReadings changes the readings while serving (an upgrade, a restart of
// the console): answers from now on follow them.
func (s *Simulator) SetReadings(r Readings) { s.setReadings(r) }

// Nodes returns the node keys in configuration order.
func (s *Simulator) Nodes() []string { return s.nodes() }

// Tables returns the table names the scenario uses for a node.
func (s *Simulator) Tables(node string) []string { return s.tables(node) }

// Indexes returns the hyperindex names the scenario uses for a node.
func (s *Simulator) Indexes(node string) []string { return s.indexes(node) }

// ---- Faults (implemented in faults.go) ----

// SetNodeFault makes the calls for node fail as f says, replacing the
// node's earlier fault; the zero Fault removes it.
func (s *Simulator) SetNodeFault(node string, f Fault) { s.setNodeFault(node, f) }

// SetConsoleFault makes every call to the console fail as f says,
// replacing the earlier one; the zero Fault removes it.
func (s *Simulator) SetConsoleFault(f Fault) { s.setConsoleFault(f) }

// ClearFaults removes every node and console fault.
func (s *Simulator) ClearFaults() { s.clearFaults() }

// RevokeTokens invalidates every token issued so far.
func (s *Simulator) RevokeTokens() { s.revokeTokens() }

// SetPassword changes (or adds) a user's password.
func (s *Simulator) SetPassword(user, password string) { s.setPassword(user, password) }

// ---- Observation ----

// Stats returns a copy of the counters.
func (s *Simulator) Stats() Stats { return s.stats() }

// ResetStats zeroes the counters.
func (s *Simulator) ResetStats() { s.resetStats() }
