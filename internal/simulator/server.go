package simulator

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Simulator is a simulated console with its nodes. Safe for concurrent use.
type Simulator struct {
	cfg   Config
	clock *steppedClock // Config.Clock, moved by StepClock
	loc   *time.Location

	nodeList []*node
	byKey    map[string]*node

	auth   authState
	faults faultState
	st     statsState

	rd       atomic.Pointer[Readings] // the readings in force (SetReadings)
	admin    atomic.Bool              // serve the /sim/ admin API too (EnableAdmin)
	rateBits atomic.Uint64            // background rate (SetRate), as float64 bits

	// Serving. The listener can be closed and reopened on the same address
	// (the console Down fault) while the http.Server lives on.
	srvMu   sync.Mutex
	srv     *http.Server
	addr    string       // resolved listen address, kept across Down
	ln      net.Listener // the TCP listener, beneath TLS with Config.TLS
	tls     *tls.Config  // the listener's TLS, nil for plain HTTP
	held    bool         // ln shares its port (SO_REUSEPORT): hold can keep it while Down
	hold    io.Closer    // while Down: a bound socket that never listens, holding the port
	conns   map[net.Conn]struct{}
	serving sync.WaitGroup
	closed  chan struct{}
	isClose bool
}

func newSimulator(cfg Config) *Simulator {
	s := &Simulator{cfg: cfg, clock: &steppedClock{base: cfg.Clock}, loc: cfg.Location, byKey: map[string]*node{},
		closed: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	if s.clock.base == nil {
		s.clock.base = realClock{}
	}
	if s.loc == nil {
		s.loc = time.UTC
	}
	if s.cfg.RefusalStatus == 0 {
		s.cfg.RefusalStatus = http.StatusUnauthorized
	}
	s.setRate(cfg.Rate)
	s.setReadings(cfg.Readings)
	s.auth.init(cfg)
	s.faults.nodes = map[string]*activeFault{}
	s.st.reset()
	for i, nc := range cfg.Nodes {
		if nc.Port == 0 {
			nc.Port = 9999
		}
		n := &node{cfg: nc, key: nc.Key(), index: i, number: nc.Number, version: nc.Version,
			loaded: map[string]bool{}, offsetMS: nc.ClockOffset.Milliseconds()}
		if n.number == 0 {
			n.number = i + 1
		}
		if n.version == "" {
			n.version = "2024.1.0"
		}
		n.tables = nodeTables(i)
		n.indexes = nodeIndexes(i, n.tables)
		s.nodeList = append(s.nodeList, n)
		s.byKey[n.key] = n
	}
	for _, n := range s.nodeList {
		n.mu.Lock()
		now := s.nowMS(n)
		s.initialHistory(n, now)
		// Background generation starts with the next simulated second.
		n.genSlot = now/1000 + 1
		n.mu.Unlock()
	}
	return s
}

func (s *Simulator) start(addr string) error {
	// A port the kernel picks (port 0, as every test asks) is held across
	// Down where the platform can (holdPort): released, a parallel test's
	// listener could take it, and the console could not come back. A port
	// the user names is not shared (a second simulator on it must fail), so
	// it is released while Down and listened on again.
	held := false
	if _, port, err := net.SplitHostPort(addr); err == nil && (port == "0" || port == "") {
		held = canHoldPort
	}
	var ln net.Listener
	var err error
	if held {
		ln, err = listenShared(addr)
	} else {
		ln, err = net.Listen("tcp", addr)
	}
	if err != nil {
		return err
	}
	s.srvMu.Lock()
	defer s.srvMu.Unlock()
	s.held = held
	s.addr = ln.Addr().String()
	s.srv = &http.Server{
		Handler:           s.handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ConnState:         s.trackConn,
	}
	if s.cfg.TLS != nil {
		s.tls, s.srv.Protocols = serverTLS(s.cfg.TLS)
	}
	s.serveLocked(ln)
	return nil
}

// serveLocked serves on ln in the background (through TLS with
// Config.TLS). Caller holds srvMu.
func (s *Simulator) serveLocked(ln net.Listener) {
	s.ln = ln
	if s.tls != nil {
		ln = tls.NewListener(ln, s.tls)
	}
	srv := s.srv
	s.serving.Add(1)
	go func() {
		defer s.serving.Done()
		_ = srv.Serve(ln)
	}()
}

func (s *Simulator) trackConn(c net.Conn, st http.ConnState) {
	s.srvMu.Lock()
	defer s.srvMu.Unlock()
	switch st {
	case http.StateNew:
		s.conns[c] = struct{}{}
		s.st.add(func(st *Stats) { st.Connections++ })
	case http.StateClosed, http.StateHijacked:
		delete(s.conns, c)
	}
}

// setDown closes (down) or reopens the listener on the same address. Open
// connections are closed too: a console that is down answers nothing, and
// refuses new connections (ECONNREFUSED).
func (s *Simulator) setDown(down bool) {
	s.srvMu.Lock()
	defer s.srvMu.Unlock()
	if s.srv == nil || s.isClose {
		return
	}
	if down {
		if s.ln == nil {
			return
		}
		if s.held {
			// The port stays bound without a listener: connections are
			// refused, and no other socket can take the port meanwhile.
			// (Should that fail, the port is released as elsewhere.)
			if hold, err := holdPort(s.ln.Addr().(*net.TCPAddr)); err == nil {
				s.hold = hold
			}
		}
		_ = s.ln.Close()
		s.ln = nil
		for c := range s.conns {
			_ = c.Close()
		}
		return
	}
	if s.ln != nil {
		return
	}
	listen := net.Listen
	if s.held {
		listen = func(_, addr string) (net.Listener, error) { return listenShared(addr) }
	}
	if s.hold != nil {
		ln, err := listen("tcp", s.addr)
		_ = s.hold.Close()
		s.hold = nil
		if err == nil {
			s.serveLocked(ln)
			return
		}
	}
	// The port was released while down: listen on it again, retrying
	// briefly in case the kernel has not released it yet. Another socket
	// may have taken it meanwhile; then the console stays down.
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ {
		if ln, err = listen("tcp", s.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return
	}
	s.serveLocked(ln)
}

func (s *Simulator) url() string {
	s.srvMu.Lock()
	defer s.srvMu.Unlock()
	if s.tls != nil {
		return "https://" + s.addr
	}
	return "http://" + s.addr
}

// serverTLS is the listener's TLS configuration for cfg, offering in ALPN
// the protocols of cfg.NextProtos (both when empty), and the server's
// protocols to match: the console speaks only what it offers.
func serverTLS(cfg *tls.Config) (*tls.Config, *http.Protocols) {
	out := cfg.Clone()
	if len(out.NextProtos) == 0 {
		out.NextProtos = []string{"h2", "http/1.1"}
	}
	var p http.Protocols
	for _, proto := range out.NextProtos {
		switch proto {
		case "h2":
			p.SetHTTP2(true)
		case "http/1.1":
			p.SetHTTP1(true)
		}
	}
	if p.HTTP2() && !p.HTTP1() {
		// Go's TLS server lets a client that offers http/1.1 alone
		// through an "h2"-only ALPN list, without a protocol (Go issue
		// 46310), and the HTTP server would then hang up on it. The
		// HTTP/2-only fronts this stands for refuse it in the handshake,
		// with the no_application_protocol alert: a list without "h2"
		// (and without what the client offers) makes Go send that alert.
		h2 := out
		refuse := h2.Clone()
		refuse.NextProtos = []string{"h2-only-front"}
		out = &tls.Config{GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			if len(hello.SupportedProtos) > 0 && !slices.Contains(hello.SupportedProtos, "h2") {
				return refuse, nil
			}
			return h2, nil
		}}
	}
	return out, &p
}

func (s *Simulator) handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

func (s *Simulator) close() error {
	s.srvMu.Lock()
	if s.isClose {
		s.srvMu.Unlock()
		return nil
	}
	s.isClose = true
	close(s.closed)
	srv := s.srv
	if s.hold != nil {
		_ = s.hold.Close()
		s.hold = nil
	}
	s.srvMu.Unlock()
	if srv == nil {
		return nil
	}
	err := srv.Close()
	s.serving.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
