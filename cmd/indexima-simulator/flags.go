package main

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// options are the command-line flags.
type options struct {
	listen         string
	nodes          int
	nodeAddrs      []string
	users          []string
	auth           bool
	staticTokens   []string
	tokenLifetime  time.Duration
	refusalStatus  int
	ssoProxy       string
	rate           float64
	seed           int64
	speed          float64
	scenario       string
	every          time.Duration
	listingCap     int
	maxLimit       int
	countRunning   bool
	exclusiveSince bool
	last           string
	runnings       string
	bounds         string
	newestFirst    bool
	capKeepsNewest bool
	retainFor      time.Duration
	retainLast     int
	abortOnStop    bool
	date           bool
	location       string
	profile        string
	clockOffsets   []string
	startedAgo     time.Duration
	pretty         bool
	logLevel       string
}

func parseFlags(args []string) (*options, error) {
	app, o := newApp()
	if _, err := app.Parse(args); err != nil {
		return nil, err
	}
	return o, nil
}

// newApp declares every flag.
func newApp() (*kingpin.Application, *options) {
	o := &options{}
	app := kingpin.New("indexima-simulator",
		"A simulated cluster console speaking the console REST API, for trying the exporter without a cluster.")
	app.HelpFlag.Short('h')
	app.Flag("listen", "Address to serve the console API (and the /sim/ admin API) on.").
		Default("127.0.0.1:8082").StringVar(&o.listen)
	app.Flag("nodes", "Number of nodes, named indexima-core-1..N, port 9999 (ignored when --node is given).").
		Default("3").IntVar(&o.nodes)
	app.Flag("node", "A node as host:port (repeatable); overrides --nodes.").StringsVar(&o.nodeAddrs)
	app.Flag("user", "A console user as name:password (repeatable).").
		Default("monitor:monitor").StringsVar(&o.users)
	// Booleans are named for what they turn on: kingpin gives each its
	// --no- form, so --no-auth and --no-date read as before.
	app.Flag("auth", "Require a login and a token on every call; --no-auth turns authentication off, as in older consoles.").
		Default("true").BoolVar(&o.auth)
	app.Flag("static-token", "A token that is always accepted and never expires (repeatable).").
		StringsVar(&o.staticTokens)
	app.Flag("token-lifetime", "Simulated time after which a token is refused; 0: never.").
		Default("0").DurationVar(&o.tokenLifetime)
	app.Flag("refusal-status", "HTTP status of a refused (unauthenticated) call.").
		Default("401").IntVar(&o.refusalStatus)
	app.Flag("sso-proxy", "Answer calls with an expired or unknown token as a single-sign-on proxy does: none (the console's refusal), login-page (200 text/html), or redirect (302 to /login).").
		Default("none").EnumVar(&o.ssoProxy, "none", string(simulator.SSOLoginPage), string(simulator.SSORedirect))
	app.Flag("rate", "Background events per node per simulated second.").Default("0.2").Float64Var(&o.rate)
	app.Flag("seed", "Seed of the scenario generator.").Default("1").Int64Var(&o.seed)
	app.Flag("speed", "Simulated seconds per real second; above 1 the console's clock runs ahead of the real one.").Default("1").Float64Var(&o.speed)
	app.Flag("scenario", "Scripted incidents: none, or lively (node-down reports, memory-low episodes and reloads, cluster restarts).").
		Default("none").EnumVar(&o.scenario, "none", "lively")
	app.Flag("scenario.every", "Mean simulated time between two lively incidents.").
		Default("60s").DurationVar(&o.every)
	// The readings: one flag per choice the specification leaves open
	// (docs/counting.md); each overrides what --profile sets.
	app.Flag("last", "What a listing's `last` is: "+strings.Join(simulator.LastReadings, ", ")+" (default: as the profile says).").
		StringVar(&o.last)
	app.Flag("runnings", "How running events are shown: "+strings.Join(simulator.RunningsReadings, ", ")+" (default: as the profile says).").
		StringVar(&o.runnings)
	app.Flag("exclusive-since", "lastevents/:time returns date > time instead of date >= time.").
		BoolVar(&o.exclusiveSince)
	app.Flag("bounds", "Bounds of asc, desc and count: "+strings.Join(simulator.BoundsReadings, ", ")+".").
		Default("inclusive").EnumVar(&o.bounds, simulator.BoundsReadings...)
	app.Flag("newest-first", "Day and lastevents listings newest first.").BoolVar(&o.newestFirst)
	app.Flag("listing-cap", "Cap of reqs in day/date/lastevents listings (0: none).").Default("0").IntVar(&o.listingCap)
	app.Flag("cap-keeps-newest", "A capped listing keeps the newest events of its range instead of the oldest.").
		BoolVar(&o.capKeepsNewest)
	app.Flag("max-limit", "Silent cap of :limit of asc/desc (0: none).").Default("0").IntVar(&o.maxLimit)
	app.Flag("count-running", "Count running events in event/count too.").BoolVar(&o.countRunning)
	app.Flag("retain-for", "Forget events dated more than this before the node's now (0: keep them).").
		Default("0").DurationVar(&o.retainFor)
	app.Flag("retain-last", "Keep only the newest N events of each node (0: all).").Default("0").IntVar(&o.retainLast)
	app.Flag("abort-on-stop", "A cluster stop aborts running events: they never complete and are never listed again.").
		BoolVar(&o.abortOnStop)
	app.Flag("date", "A Date header (the console's clock) on every answer; --no-date leaves it out.").
		Default("true").BoolVar(&o.date)
	app.Flag("location", "Time zone of day boundaries of get/events (IANA name).").Default("UTC").StringVar(&o.location)
	app.Flag("profile", "Console behaviour where the specification leaves a choice open: "+profileHelp()+".").
		Default(simulator.ProfileNames()[0]).EnumVar(&o.profile, simulator.ProfileNames()...)
	app.Flag("node-clock-offset", "A node's clock against the console's, as host[:port]=duration (negative: the node lags; repeatable).").
		StringsVar(&o.clockOffsets)
	app.Flag("started-ago", "Put each node's initial cluster start this long before now (default: earlier today).").
		Default("0").DurationVar(&o.startedAgo)
	app.Flag("pretty", "Indent JSON listings.").BoolVar(&o.pretty)
	app.Flag("log.level", "Log level: debug, info, warn, error.").Default("info").
		EnumVar(&o.logLevel, "debug", "info", "warn", "error")
	return app, o
}

// config turns the flags into a simulator configuration.
func (o *options) config(clock simulator.Clock) (simulator.Config, error) {
	cfg := simulator.Config{
		StaticTokens:  o.staticTokens,
		TokenLifetime: o.tokenLifetime,
		RefusalStatus: o.refusalStatus,
		Clock:         clock,
		Seed:          o.seed,
		Rate:          o.rate,
		StartedAgo:    o.startedAgo,
		Pretty:        o.pretty,
	}
	if err := cfg.ApplyProfile(o.profile); err != nil {
		return cfg, err
	}
	if err := o.readings(&cfg.Readings); err != nil {
		return cfg, err
	}
	if o.ssoProxy != "none" {
		cfg.SSOProxy = simulator.SSOMode(o.ssoProxy)
	}
	loc, err := time.LoadLocation(o.location)
	if err != nil {
		return cfg, fmt.Errorf("--location %q: %w", o.location, err)
	}
	cfg.Location = loc
	if o.auth {
		cfg.Users = map[string]string{}
		for _, u := range o.users {
			name, pass, ok := strings.Cut(u, ":")
			if !ok || name == "" {
				return cfg, fmt.Errorf("--user needs name:password, got a value without ':' or name")
			}
			cfg.Users[name] = pass
		}
	}
	if len(o.nodeAddrs) > 0 {
		for _, a := range o.nodeAddrs {
			host, portText, err := net.SplitHostPort(a)
			if err != nil {
				return cfg, fmt.Errorf("--node %q: want host:port: %w", a, err)
			}
			port, err := strconv.Atoi(portText)
			if err != nil || port <= 0 || port > 65535 {
				return cfg, fmt.Errorf("--node %q: bad port", a)
			}
			cfg.Nodes = append(cfg.Nodes, simulator.NodeConfig{Host: host, Port: port})
		}
	} else {
		if o.nodes < 1 {
			return cfg, fmt.Errorf("--nodes must be at least 1, got %d", o.nodes)
		}
		for i := 1; i <= o.nodes; i++ {
			cfg.Nodes = append(cfg.Nodes, simulator.NodeConfig{Host: fmt.Sprintf("indexima-core-%d", i), Port: 9999})
		}
	}
	for _, co := range o.clockOffsets {
		addr, d, ok := strings.Cut(co, "=")
		offset, err := time.ParseDuration(d)
		if !ok || err != nil {
			return cfg, fmt.Errorf("--node-clock-offset %q: want host[:port]=duration, e.g. indexima-core-2=-20s", co)
		}
		found := false
		for i, n := range cfg.Nodes {
			if n.Host == addr || n.Key() == addr {
				cfg.Nodes[i].ClockOffset, found = offset, true
			}
		}
		if !found {
			return cfg, fmt.Errorf("--node-clock-offset %q: no node %s", co, addr)
		}
	}
	if o.refusalStatus < 100 || o.refusalStatus > 599 {
		return cfg, fmt.Errorf("--refusal-status %d is not an HTTP status", o.refusalStatus)
	}
	return cfg, nil
}

// profileHelp lists the profiles for --help.
func profileHelp() string {
	var parts []string
	for _, name := range simulator.ProfileNames() {
		parts = append(parts, name+" ("+simulator.ProfileDoc(name)+")")
	}
	return strings.Join(parts, "; ")
}

// readings applies the reading flags over what the profile set.
func (o *options) readings(r *simulator.Readings) error {
	var err error
	if o.last != "" {
		if r.Last, err = simulator.ParseLast(o.last); err != nil {
			return fmt.Errorf("--last: %w", err)
		}
	}
	if o.runnings != "" {
		if r.Runnings, err = simulator.ParseRunnings(o.runnings); err != nil {
			return fmt.Errorf("--runnings: %w", err)
		}
	}
	if r.Bounds, err = simulator.ParseBounds(o.bounds); err != nil {
		return fmt.Errorf("--bounds: %w", err)
	}
	r.ExclusiveSince = r.ExclusiveSince || o.exclusiveSince
	r.NewestFirst = r.NewestFirst || o.newestFirst
	r.CapKeepsNewest = r.CapKeepsNewest || o.capKeepsNewest
	r.CountRunning = r.CountRunning || o.countRunning
	r.AbortOnStop, r.NoDate = o.abortOnStop, !o.date
	r.ListingCap, r.MaxLimit = o.listingCap, o.maxLimit
	r.RetainFor, r.RetainLast = o.retainFor, o.retainLast
	return r.Validate()
}
