package simulator

import (
	"sync"
	"sync/atomic"
	"time"
)

// realClock is the default Clock: wall time.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// steppedClock is the console's clock: the configured Clock moved by the
// steps StepClock made (an NTP correction on the whole cluster). The nodes'
// clocks run at their offsets from it, so they step with it.
type steppedClock struct {
	base Clock
	step atomic.Int64 // ns
}

func (c *steppedClock) Now() time.Time { return c.base.Now().Add(time.Duration(c.step.Load())) }

// manualClock is the body of ManualClock: time only moves when told, so tests
// get exact determinism.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func newManualClock(t time.Time) *ManualClock {
	return &ManualClock{manualClock{now: t}}
}

// Now returns the clock's current time.
func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d (a negative d moves it back).
func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Set puts the clock at t.
func (c *manualClock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// ScaledClock is accelerated real time: from Origin on, it runs Speed
// simulated seconds per real second. The standalone simulator's --speed uses
// it to show an hour of cluster life in minutes. Above 1 it runs ahead of the
// real clock: event dates, a listing's last and the Date header are in the
// future, and ages that Prometheus computes from the exporter's timestamps
// are negative. --demo runs on the real clock and makes incidents frequent
// instead (LivelyConfig.Pace).
type ScaledClock struct {
	origin    time.Time // simulated time at realStart
	realStart time.Time
	speed     float64
}

// NewScaledClock returns a clock standing at origin now and running speed
// times faster than real time (speed <= 0 means 1).
func NewScaledClock(origin time.Time, speed float64) *ScaledClock {
	if speed <= 0 {
		speed = 1
	}
	return &ScaledClock{origin: origin, realStart: time.Now(), speed: speed}
}

// Now returns the simulated time.
func (c *ScaledClock) Now() time.Time {
	elapsed := time.Since(c.realStart)
	return c.origin.Add(time.Duration(float64(elapsed) * c.speed))
}

// Speed is the number of simulated seconds per real second.
func (c *ScaledClock) Speed() float64 { return c.speed }
