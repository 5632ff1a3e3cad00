package simulator

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
)

// LivelyConfig tunes the lively scenario.
type LivelyConfig struct {
	// Clock the schedule follows; it should be the simulator's clock (e.g. a
	// ScaledClock). Nil: real time.
	Clock Clock
	// Seed of the incident schedule.
	Seed int64
	// Every is the mean simulated time between two incidents; default 60s.
	Every time.Duration
	// Pace multiplies every wait of the scenario: between two incidents, and
	// from an incident to its follow-up (a reload, a cluster start); default
	// 1. Below 1 the incidents come sooner while the clock, and so every
	// event's date and duration, stays as it is: how tests play many
	// minutes of the demo in one without dating anything ahead.
	Pace float64
	// Poll is the real-time period at which the clock is looked at; default
	// 100ms. Incidents are logged at the node's now when they are played.
	Poll time.Duration
	// Logger receives one line per incident; nil: none.
	Logger log.Logger
}

// Lively plays periodic scripted incidents on a simulator, driven by its
// clock: NODE_DOWN reports, memory-low episodes followed by reloads, and
// now and then a cluster stop followed by a start with preload. The
// standalone simulator (--scenario lively) and the exporter's --demo mode
// both use it.
type Lively struct {
	sim     *Simulator
	cfg     LivelyConfig
	rng     *rand.Rand
	next    time.Time       // next random incident
	pending []pendingAction // follow-ups (reloads, restarts), by time
	stopped bool
}

type pendingAction struct {
	at   time.Time
	name string
	do   func()
}

// NewLively prepares the lively scenario for s; call Run to play it.
func NewLively(s *Simulator, cfg LivelyConfig) *Lively {
	if cfg.Clock == nil {
		cfg.Clock = realClock{}
	}
	if cfg.Every <= 0 {
		cfg.Every = time.Minute
	}
	if cfg.Pace <= 0 {
		cfg.Pace = 1
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 100 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = log.NewNopLogger()
	}
	l := &Lively{sim: s, cfg: cfg, rng: rand.New(rand.NewPCG(uint64(cfg.Seed), 0x11fe1))}
	l.next = cfg.Clock.Now().Add(l.gap())
	return l
}

// StartLively runs the lively scenario on s in a goroutine until ctx ends.
func StartLively(ctx context.Context, s *Simulator, cfg LivelyConfig) {
	go NewLively(s, cfg).Run(ctx)
}

// Run plays incidents as the clock reaches them, until ctx ends.
func (l *Lively) Run(ctx context.Context) {
	t := time.NewTicker(l.cfg.Poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.sim.closed:
			return
		case <-t.C:
			l.Step(l.cfg.Clock.Now())
		}
	}
}

// Step plays every incident due at now. Run calls it; tests with a
// ManualClock may call it directly instead of Run.
func (l *Lively) Step(now time.Time) {
	// Bounded: a clock jump plays at most a few dozen incidents.
	for i := 0; i < 64; i++ {
		if len(l.pending) > 0 && !l.pending[0].at.After(now) {
			p := l.pending[0]
			l.pending = l.pending[1:]
			level.Info(l.cfg.Logger).Log("msg", "lively incident", "incident", p.name)
			p.do()
			continue
		}
		if l.next.After(now) {
			return
		}
		at := l.next
		l.next = l.next.Add(l.gap())
		l.randomIncident(at)
	}
}

// gap is the simulated time to the next incident: Every ±50%, times Pace.
func (l *Lively) gap() time.Duration {
	return time.Duration(float64(l.cfg.Every) * (0.5 + l.rng.Float64()) * l.cfg.Pace)
}

// later schedules a follow-up d (times Pace) after the incident time from.
func (l *Lively) later(from time.Time, d time.Duration, name string, do func()) {
	at := from.Add(time.Duration(float64(d) * l.cfg.Pace))
	p := pendingAction{at: at, name: name, do: do}
	i := len(l.pending)
	for i > 0 && l.pending[i-1].at.After(at) {
		i--
	}
	l.pending = append(l.pending, pendingAction{})
	copy(l.pending[i+1:], l.pending[i:])
	l.pending[i] = p
}

func (l *Lively) randomIncident(at time.Time) {
	nodes := l.sim.nodeList
	if len(nodes) == 0 || l.stopped {
		return
	}
	x := l.rng.Float64()
	switch {
	case x < 0.4 && len(nodes) > 1:
		down := nodes[l.rng.IntN(len(nodes))]
		// Each other node notices with probability 1/2; at least one does.
		reporters := 0
		for _, n := range nodes {
			if n != down && l.rng.IntN(2) == 0 {
				l.sim.ReportNodeDown(n.key, down.key)
				reporters++
			}
		}
		if reporters == 0 {
			l.sim.ReportNodeDown(nodes[(down.index+1)%len(nodes)].key, down.key)
		}
		level.Info(l.cfg.Logger).Log("msg", "lively incident", "incident", "node-down", "down", down.key)
	case x < 0.88:
		n := nodes[l.rng.IntN(len(nodes))]
		l.sim.MemoryLowEpisode(n.key)
		level.Info(l.cfg.Logger).Log("msg", "lively incident", "incident", "memory-low", "node", n.key)
		wait := 15*time.Second + time.Duration(l.rng.Int64N(int64(45*time.Second)))
		l.later(at, wait, "reload "+n.key, func() {
			if !l.stopped {
				l.sim.ReloadIndexes(n.key)
			}
		})
	default:
		l.stopped = true
		l.sim.StopCluster()
		level.Info(l.cfg.Logger).Log("msg", "lively incident", "incident", "cluster-stop")
		wait := 10*time.Second + time.Duration(l.rng.Int64N(int64(20*time.Second)))
		l.later(at, wait, "cluster-start", func() {
			l.stopped = false
			l.sim.StartCluster()
		})
	}
}
