package faults

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

var (
	soakSeed = flag.Uint64("soak.seed", 20261122, "seed of the soak's fault schedule")
	soakDays = flag.Float64("soak.days", defaultSoakDays(), "simulated days of the soak, per console profile (default 0.35, or 0.1 under -race)")
	soakSkip = flag.String("soak.skip", "", "regexp of fault names the soak leaves out (to narrow down a failure)")
	soakOnly = flag.String("soak.profiles", "", "regexp of the console profiles the soak runs (default: all)")
)

// soakFault is one kind of trouble the soak injects: apply starts it and
// returns how many scrapes it lasts (0: a one-off).
type soakFault struct {
	name   string
	weight int
	apply  func(s *soak) int
}

type soak struct {
	r        *rig
	rng      *rand.Rand
	injected map[string]int
	clear    []func()
	state    string

	downSince     map[string]time.Time // nodes down at the latest scrape, since when (simulated)
	longestOutage time.Duration
}

// noteOutages follows, in simulated time, how long each node has been down.
func (s *soak) noteOutages(sc scrape) {
	if s.downSince == nil {
		s.downSince = map[string]time.Time{}
	}
	now := s.r.clock.Now()
	for _, n := range s.r.nodes {
		if up, _ := sc.value("indexima_up", node(n)); up == 1 {
			delete(s.downSince, n)
			continue
		}
		if _, ok := s.downSince[n]; !ok {
			s.downSince[n] = now
		}
		s.longestOutage = max(s.longestOutage, now.Sub(s.downSince[n]))
	}
}

func (s *soak) node() string { return s.r.nodes[s.rng.IntN(len(s.r.nodes))] }

func (s *soak) nodeFault(f simulator.Fault, lasting int) int {
	n := s.node()
	s.r.sim.SetNodeFault(n, f)
	s.clear = append(s.clear, func() { s.r.sim.SetNodeFault(n, simulator.Fault{}) })
	return lasting
}

func (s *soak) consoleFault(f simulator.Fault, lasting int) int {
	s.r.sim.SetConsoleFault(f)
	s.clear = append(s.clear, func() { s.r.sim.SetConsoleFault(simulator.Fault{}) })
	return lasting
}

// soakFaults are the cases of the fault suite, drawn at random.
var soakFaults = []soakFault{
	{"node 502 for a while", 6, func(s *soak) int { return s.nodeFault(simulator.Fault{Status: 502}, 1+s.rng.IntN(20)) }},
	{"node 5xx burst", 6, func(s *soak) int {
		return s.nodeFault(simulator.Fault{Status: 500 + s.rng.IntN(4), Count: 1 + s.rng.IntN(4)}, 3)
	}},
	{"node malformed json", 4, func(s *soak) int { return s.nodeFault(simulator.Fault{Body: simulator.BodyMalformedJSON, Count: 2}, 2) }},
	{"node truncated gzip", 4, func(s *soak) int { return s.nodeFault(simulator.Fault{Body: simulator.BodyTruncatedGzip, Count: 2}, 2) }},
	{"node wrong shape", 4, func(s *soak) int { return s.nodeFault(simulator.Fault{Body: simulator.BodyWrongShape, Count: 2}, 2) }},
	{"node html page", 4, func(s *soak) int { return s.nodeFault(simulator.Fault{Body: simulator.BodyHTML, Count: 3}, 3) }},
	{"node message body", 3, func(s *soak) int { return s.nodeFault(simulator.Fault{Body: simulator.BodyMessage, Count: 2}, 2) }},
	{"node decompression bomb", 1, func(s *soak) int { return s.nodeFault(simulator.Fault{Body: simulator.BodyBomb, Count: 1}, 1) }},
	{"node endless body", 1, func(s *soak) int { return s.nodeFault(simulator.Fault{Body: simulator.BodyEndless, Count: 1}, 1) }},
	{"node hangs", 1, func(s *soak) int { return s.nodeFault(simulator.Fault{Hang: true, Count: 1}, 1) }},
	{"node slower than the scrape deadline", 3, func(s *soak) int {
		// Each call answers in 0.3 s, within the console timeout (1 s);
		// Prometheus announces 0.5 s, so the poll's second call is cut by
		// the scrape's deadline (0.45 s). Short: each such scrape waits it.
		s.r.scrapeTimeout = 500 * time.Millisecond
		s.clear = append(s.clear, func() { s.r.scrapeTimeout = 0 })
		return s.nodeFault(simulator.Fault{Latency: 300 * time.Millisecond}, 1+s.rng.IntN(2))
	}},
	{"console down", 3, func(s *soak) int { return s.consoleFault(simulator.Fault{Down: true}, 1+s.rng.IntN(15)) }},
	{"console 5xx burst", 3, func(s *soak) int { return s.consoleFault(simulator.Fault{Status: 502, Count: 1 + s.rng.IntN(6)}, 3) }},
	{"tokens revoked", 4, func(s *soak) int { s.r.sim.RevokeTokens(); return 0 }},
	{"wrong password for a while", 1, func(s *soak) int {
		s.r.sim.SetPassword(user, "rotated-by-someone")
		s.r.sim.RevokeTokens()
		s.clear = append(s.clear, func() { s.r.sim.SetPassword(user, password) })
		return 1 + s.rng.IntN(5)
	}},
	{"node clock steps back", 2, func(s *soak) int {
		s.r.shiftClock(s.node(), -time.Duration(1+s.rng.IntN(600))*time.Second)
		return 0
	}},
	{"cluster stop and start", 1, func(s *soak) int {
		s.r.sim.StopCluster()
		s.clear = append(s.clear, s.r.sim.StartCluster)
		return 1 + s.rng.IntN(3)
	}},
	{"memory low episode", 2, func(s *soak) int {
		n := s.node()
		idx := s.r.sim.Indexes(n)
		s.r.sim.MemoryLowEpisode(n, idx[:1+s.rng.IntN(len(idx))]...)
		s.clear = append(s.clear, func() { s.r.sim.ReloadIndexes(n, idx...) })
		return 2
	}},
	{"node down reports", 2, func(s *soak) int {
		a, b := s.node(), s.node()
		if a != b {
			s.r.sim.ReportNodeDown(a, b)
		}
		return 0
	}},
	{"burst at one millisecond", 2, func(s *soak) int {
		n := s.node()
		ev := simulator.Event{Type: simulator.TableLoaded, Comment: "burst.table", Duration: 5}
		evs := make([]simulator.Event, 20+s.rng.IntN(300))
		for i := range evs {
			evs[i] = ev
		}
		s.r.sim.Append(n, evs...)
		return 0
	}},
	{"reload by SIGHUP", 2, func(s *soak) int { s.r.exp.sighup(); return 0 }},
	{"exporter crash and restart (state file)", 1, func(s *soak) int {
		s.r.exp.kill()
		s.r.run0(1+s.rng.IntN(10), time.Minute)
		s.r.start()
		return 0
	}},
}

// soakProfile is one console behaviour the soak runs on (the specification
// leaves these choices open; real consoles make any of them).
type soakProfile struct {
	name         string
	profile      string // simulator profile
	countRunning bool
	listingCap   int
	lags         []time.Duration // per node clock offset (negative: behind the console)
	// readings sets the knobs the profile leaves (docs/counting.md, the
	// inventory of readings), after the profile.
	readings func(*simulator.Readings)
	// faults are drawn on this profile only, besides soakFaults: a change
	// a real console makes while serving (an upgrade, a restart).
	faults []soakFault
}

// switchCountSemantics is a console upgraded or restarted with the other
// reading of event/count (completed events only, or running ones too).
var switchCountSemantics = soakFault{"console switches its count semantics", 3, func(s *soak) int {
	rd := s.r.sim.Readings()
	rd.CountRunning = !rd.CountRunning
	s.r.sim.SetReadings(rd)
	return 0
}}

// stopAbortingRunning is a cluster stop on a console that aborts the events
// running then: they never complete and are never listed again.
var stopAbortingRunning = soakFault{"cluster stop aborting running events", 3, func(s *soak) int {
	s.r.sim.StopCluster()
	s.clear = append(s.clear, s.r.sim.StartCluster)
	return 1 + s.rng.IntN(2)
}}

// batchBeyondPage is a run of events at one millisecond longer than a page
// of the console's silent :limit maximum (maxLimitSoak) holds.
var batchBeyondPage = soakFault{"run at one millisecond longer than a page", 3, func(s *soak) int {
	n := s.node()
	ev := simulator.Event{Type: simulator.SaveMetadata, Comment: "7", Duration: 3}
	evs := make([]simulator.Event, maxLimitSoak+1+s.rng.IntN(3*maxLimitSoak))
	for i := range evs {
		evs[i] = ev
	}
	s.r.sim.Append(n, evs...)
	return 0
}}

const maxLimitSoak = 100

var soakProfiles = []soakProfile{
	{name: "running", profile: "running"},
	{name: "running+count-running", profile: "running", countRunning: true},
	{name: "completed-only", profile: "completed-only"},
	{name: "console-clock+lagging-nodes", profile: "console-clock", countRunning: true,
		lags: []time.Duration{0, -20 * time.Second, -90 * time.Second, -3 * time.Second}},
	{name: "console-clock-completed-only+lagging-nodes", profile: "console-clock-completed-only",
		lags: []time.Duration{-90 * time.Second, 0, -20 * time.Second, -5 * time.Minute}},
	{name: "newest-first+capped", profile: "newest-first", listingCap: 40},
	{name: "sso-login-page", profile: "sso-login-page"},
	// The readings of issue 20, none of which the profiles above make.
	{name: "last-newest+exclusive-bounds", profile: "running", readings: func(r *simulator.Readings) {
		r.Last, r.ExclusiveSince, r.Bounds = simulator.LastNewest, true, simulator.BoundsExclusive
	}},
	{name: "forgetting+last-ahead+count-running", profile: "running", countRunning: true, readings: func(r *simulator.Readings) {
		// Longer than any outage the faults make (about 30 min at most):
		// every event stays listed for a few polls.
		r.RetainFor, r.RetainLast, r.Last = 2*time.Hour, 1500, simulator.LastAhead
	}},
	{name: "count-switching+abort-on-stop", profile: "running", readings: func(r *simulator.Readings) {
		r.AbortOnStop = true
	}, faults: []soakFault{switchCountSemantics, stopAbortingRunning}},
	{name: "runs-beyond-max-limit+no-date", profile: "running", readings: func(r *simulator.Readings) {
		r.MaxLimit, r.NoDate, r.Bounds = maxLimitSoak, true, simulator.BoundsEndExclusive
	}, faults: []soakFault{batchBeyondPage}},
}

// minSoakFaults is what the soak must inject over all its profiles at the
// default length: enough for every kind of fault to meet every profile.
const minSoakFaults = 500

// The soak: 0.35 simulated day (or --soak.days) per console profile, four busy
// nodes scraped every 50-90 simulated seconds, with faults of every kind
// above injected from a seeded generator. At the end every counter must equal
// the truth, and reported minus counted be 0 on every node. The simulated
// clock moves only between scrapes, so the verdict does not depend on the
// machine's speed: a call that times out on a slow machine (a decompression
// bomb under -race) and one that is refused on a fast one are both faults
// the exporter must survive exactly. The exporter's own waits run on its
// real clock, though: when a fault clears, the soak waits at the consoles'
// clock for every node to be up (rig.awaitUp), so that a second of login
// backoff is not hours of the consoles' time on a fast machine and seconds
// on a slow one. It prints the totals; run it with
//
//	go test -run TestSoak -v ./faults/
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak skipped with -short")
	}
	var mu sync.Mutex
	faults, ran := 0, 0
	t.Run("profiles", func(t *testing.T) {
		// Every profile at once: a soak waits on its faults' timeouts more
		// than it computes, and subtests run from goroutines are not held
		// to -parallel (GOMAXPROCS), which would run two at a time.
		only := regexp.MustCompile(*soakOnly)
		var wg sync.WaitGroup
		for i, sp := range soakProfiles {
			if !only.MatchString(sp.name) {
				continue
			}
			wg.Go(func() {
				t.Run(sp.name, func(t *testing.T) {
					n := runSoak(t, sp, *soakSeed+uint64(i))
					mu.Lock()
					faults += n
					ran++
					mu.Unlock()
				})
			})
		}
		wg.Wait()
	})
	t.Logf("soak: %d faults injected over %d profiles", faults, len(soakProfiles))
	if *soakDays >= plainSoakDays && *soakSkip == "" && ran == len(soakProfiles) && faults < minSoakFaults {
		t.Errorf("soak: %d faults injected in all, want at least %d", faults, minSoakFaults)
	}
}

func runSoak(t *testing.T, sp soakProfile, seed uint64) int {
	cfg := simulator.Config{Seed: int64(seed), Rate: 0.15, TokenLifetime: time.Hour,
		Readings: simulator.Readings{CountRunning: sp.countRunning, ListingCap: sp.listingCap}}
	if err := cfg.ApplyProfile(sp.profile); err != nil {
		t.Fatal(err)
	}
	if sp.readings != nil {
		sp.readings(&cfg.Readings)
	}
	for i, lag := range sp.lags {
		cfg.Nodes = append(cfg.Nodes, simulator.NodeConfig{Host: fmt.Sprintf("core-%d.test", i+1), ClockOffset: lag})
	}
	r := newRig(t, rigOpts{nodes: 4, timeout: time.Second, noStart: true, sim: cfg})
	r.parseOnly = map[string]bool{"indexima_up": true, "indexima_events_total": true,
		"indexima_events_reported_total": true, "indexima_events_cursor_timestamp_seconds": true,
		"indexima_exporter_logins_total": true}
	for i, lag := range sp.lags {
		r.shift[r.nodes[i]] = lag.Milliseconds()
	}
	s := &soak{r: r, rng: rand.New(rand.NewPCG(seed, 7)), injected: map[string]int{}}
	s.state = r.dir + "/cursors.json"
	r.args = []string{"--events.state-file=" + s.state}
	r.start()
	skip := regexp.MustCompile("^$")
	if *soakSkip != "" {
		skip = regexp.MustCompile(*soakSkip)
	}
	var kindsOn []soakFault
	total := 0
	for _, f := range append(soakFaults[:len(soakFaults):len(soakFaults)], sp.faults...) {
		if !skip.MatchString(f.name) {
			kindsOn = append(kindsOn, f)
			total += f.weight
		}
	}
	r.scrape()
	end := r.clock.Now().Add(time.Duration(*soakDays * float64(24*time.Hour)))
	scrapes, activeUntil := 0, 0
	const maxScrapes = 5000 // bound: a day at 50-90 s steps is about 1240
	for ; r.clock.Now().Before(end) && scrapes < maxScrapes; scrapes++ {
		r.advance(time.Duration(50+s.rng.IntN(41)) * time.Second)
		if scrapes >= activeUntil {
			for _, c := range s.clear {
				c()
			}
			if len(s.clear) > 0 {
				r.awaitUp()
			}
			s.clear = nil
			if s.rng.IntN(100) < faultChance {
				x := s.rng.IntN(total)
				for _, f := range kindsOn {
					if x -= f.weight; x < 0 {
						s.injected[f.name]++
						activeUntil = scrapes + f.apply(s)
						break
					}
				}
			}
		}
		s.noteOutages(r.scrape())
	}
	for _, c := range s.clear {
		c()
	}
	r.sim.ClearFaults()
	final := r.settle()
	tl := r.check(final)
	for _, n := range r.nodes {
		reported, _ := final.value("indexima_events_reported_total", node(n))
		var counted float64
		for _, v := range final.byLabel("indexima_events_total", node(n), "event") {
			counted += v
		}
		// A console that counts running events counts those a cluster
		// stop aborted for ever, and never lists them: the ones no listing
		// showed running cannot be told from missed events (docs/counting.md).
		aborted := 0
		for _, ev := range r.sim.Truth(n) {
			if ev.Aborted && ev.Date > r.baseline[n] {
				aborted++
			}
		}
		if reported < counted || reported > counted+float64(aborted) {
			t.Errorf("soak: node %s: reported %v, counted %v (%d events aborted): the self-check is off", n, reported, counted, aborted)
		} else if reported != counted {
			t.Logf("soak: node %s: reported %v, counted %v: %v of the %d aborted events were counted by the console and never listed",
				n, reported, counted, reported-counted, aborted)
		}
	}

	generated := 0
	for _, n := range r.nodes {
		for _, ev := range r.sim.Truth(n) {
			if ev.CompletedAt <= r.high[n] {
				generated++
			}
		}
	}
	var kinds []string
	faults := 0
	for k, v := range s.injected {
		kinds = append(kinds, fmt.Sprintf("%s=%d", k, v))
		faults += v
	}
	sort.Strings(kinds)
	st := r.sim.Stats()
	t.Logf("soak %s: seed %d, %.3g simulated days, %d nodes, %d scrapes", sp.name, seed, *soakDays, len(r.nodes), scrapes)
	t.Logf("soak %s: events generated %d (in the nodes' logs), to count %d (completed after first contact), counted %d, lost %d, doubled %d",
		sp.name, generated, tl.expected, tl.counted, tl.lost, tl.doubled)
	t.Logf("soak %s: faults injected %d: %s", sp.name, faults, strings.Join(kinds, ", "))
	t.Logf("soak %s: console saw %d logins, %d failed logins, %d refused calls, %d requests",
		sp.name, st.Logins, st.LoginFailures, st.Refused, sum(st.Requests))
	t.Logf("soak %s: longest outage of a node %s (simulated)", sp.name, s.longestOutage)
	if tl.lost != 0 || tl.doubled != 0 {
		t.Errorf("soak %s: %d events lost, %d doubled", sp.name, tl.lost, tl.doubled)
	}
	if keep := cfg.Readings.RetainFor; keep > 0 && s.longestOutage >= keep {
		// Events the console forgot while the exporter could not ask are
		// lost by any exporter: the rig must not make such an outage.
		t.Errorf("soak %s: a node was down %s, as long as the console keeps events (%s): the rig broke its own bound",
			sp.name, s.longestOutage, keep)
	}
	if v, ok := final.value("indexima_exporter_logins_total", map[string]string{"result": "failure"}); ok && v > 50 {
		t.Errorf("soak %s: %v failed logins: a login storm", sp.name, v)
	}
	return faults
}

// Lengths of the soak per profile, in simulated days: the plain run of the
// test command is the one that injects the 500 faults; under -race (several
// times slower) a third as long, to hunt data races in the same paths.
const (
	plainSoakDays = 0.35
	raceSoakDays  = 0.1
)

// faultChance is the chance, in percent, that a fault starts at a scrape
// with none in progress: dense (a fault every five scrapes or so, most
// lasting a few), so that the soak meets its 500 faults in well under a
// minute; one scrape in three or so still sees no fault.
const faultChance = 40

func defaultSoakDays() float64 {
	if raceEnabled {
		return raceSoakDays
	}
	return plainSoakDays
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
