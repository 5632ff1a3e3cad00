package apiclient

import (
	"net/http"
	"sync"
	"time"
)

// consoleClock keeps the console's clock as its answers show it: the Date
// header every HTTP server sends (RFC 9110 §6.6.1), the one clock the API
// shows unambiguously. It records the latest Date and the local monotonic
// time it arrived at, so that it can tell the console's time later on.
type consoleClock struct {
	mu       sync.Mutex
	date     time.Time // the latest Date header
	received time.Time // local time (monotonic) it arrived
	// undated is when the latest answer came if it carried no valid Date
	// (zero if it did): a console (or a proxy in front of it) that sends
	// none is not asked again and again for its clock.
	undated time.Time
}

// note records the Date header of an answer, if it has a valid one.
func (cc *consoleClock) note(h http.Header) {
	now := time.Now()
	d, err := http.ParseTime(h.Get("Date"))
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if err != nil {
		cc.undated = now
		return
	}
	cc.date, cc.received, cc.undated = d, now, time.Time{}
}

// sinceUndated tells how long ago the latest answer came, if it carried no
// Date (ok false if it did, or if none came yet).
func (cc *consoleClock) sinceUndated() (time.Duration, bool) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.undated.IsZero() {
		return 0, false
	}
	return time.Since(cc.undated), true
}

// now returns the console's clock now, and how long ago its latest answer
// showed it (ok false when no answer carried a Date).
func (cc *consoleClock) now() (t time.Time, age time.Duration, ok bool) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.date.IsZero() {
		return time.Time{}, 0, false
	}
	age = time.Since(cc.received)
	return cc.date.Add(age), age, true
}

// ConsoleClock returns the console's clock now, from the Date header of its
// latest answer advanced by the time elapsed since (whole seconds: a Date
// has no more), and how old that answer is. ok is false until an answer
// carried a Date.
func (c *Client) ConsoleClock() (now time.Time, age time.Duration, ok bool) {
	return c.clock.now()
}

// UndatedAnswer tells how long ago the console's latest answer came when it
// carried no Date header (ok false when it carried one, or none came yet).
func (c *Client) UndatedAnswer() (age time.Duration, ok bool) {
	return c.clock.sinceUndated()
}
