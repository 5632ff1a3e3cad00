package faults

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

var (
	soakSeed = flag.Uint64("soak.seed", 20261122, "seed of the soak's fault schedule")
	soakDays = flag.Float64("soak.days", 1, "simulated days of the soak")
	soakSkip = flag.String("soak.skip", "", "regexp of fault names the soak leaves out (to narrow down a failure)")
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

// The soak: a simulated day (or --soak.days) of four busy nodes, scraped
// every 50-90 simulated seconds, with faults of every kind above injected
// from a seeded generator. At the end every counter must equal the truth.
// It prints the totals; run it with
//
//	go test -run TestSoak -v ./faults/
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak skipped with -short")
	}
	r := newRig(t, rigOpts{nodes: 4, timeout: time.Second, noStart: true,
		sim: simulator.Config{Seed: int64(*soakSeed), Rate: 0.15, TokenLifetime: time.Hour}})
	s := &soak{r: r, rng: rand.New(rand.NewPCG(*soakSeed, 7)), injected: map[string]int{}}
	s.state = r.dir + "/cursors.json"
	r.args = []string{"--events.state-file=" + s.state}
	r.start()
	skip := regexp.MustCompile("^$")
	if *soakSkip != "" {
		skip = regexp.MustCompile(*soakSkip)
	}
	var kindsOn []soakFault
	total := 0
	for _, f := range soakFaults {
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
			s.clear = nil
			if s.rng.IntN(100) < 8 {
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
		r.scrape()
	}
	for _, c := range s.clear {
		c()
	}
	r.sim.ClearFaults()
	final := r.settle()
	tl := r.check(final)

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
	t.Logf("soak: seed %d, %.3g simulated days, %d nodes, %d scrapes", *soakSeed, *soakDays, len(r.nodes), scrapes)
	t.Logf("soak: events generated %d (in the nodes' logs), to count %d (completed after first contact), counted %d, lost %d, doubled %d",
		generated, tl.expected, tl.counted, tl.lost, tl.doubled)
	t.Logf("soak: faults injected %d: %s", faults, strings.Join(kinds, ", "))
	t.Logf("soak: console saw %d logins, %d failed logins, %d refused calls, %d requests",
		st.Logins, st.LoginFailures, st.Refused, sum(st.Requests))
	if tl.lost != 0 || tl.doubled != 0 {
		t.Errorf("soak: %d events lost, %d doubled", tl.lost, tl.doubled)
	}
	if v, ok := final.value("indexima_exporter_logins_total", map[string]string{"result": "failure"}); ok && v > 50 {
		t.Errorf("soak: %v failed logins: a login storm", v)
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
