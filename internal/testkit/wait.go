package testkit

import (
	"testing"
	"time"
)

// WaitTimeout bounds WaitFor: long enough for a loaded CI machine, short
// enough that a test which will never see its condition ends.
const WaitTimeout = 20 * time.Second

// WaitFor polls cond until it holds, failing the test after WaitTimeout
// with what was awaited. Tests wait on conditions, never on fixed sleeps.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", WaitTimeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
