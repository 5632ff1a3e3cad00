package store

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// saveAsync saves key's state in a goroutine; the channel gets its error.
func saveAsync(s *Store, key string, cursor int64) <-chan error {
	done := make(chan error, 1)
	go func() { done <- s.Save(key, fixed(state(cursor))) }()
	return done
}

// A probe that finds the store busy lingers, and the probes that save
// meanwhile share its one sync; each save still returns only once that
// sync is done.
func TestBusyProbesShareOneSync(t *testing.T) {
	s, _ := open(t, filepath.Join(t.TempDir(), "state.json"))
	s.sync.lingerFor, s.sync.busyWithin = time.Hour, time.Hour // only endLinger ends a linger
	s.sync.endLinger = make(chan struct{})

	if err := s.Save("/node-0:9999", fixed(state(1))); err != nil { // a sync: the store is busy from now on
		t.Fatal(err)
	}
	syncs0 := s.Stats().Syncs

	leader := saveAsync(s, "/node-1:9999", 2)
	testkit.WaitFor(t, "the first probe lingering", func() bool {
		s.sync.mu.Lock()
		defer s.sync.mu.Unlock()
		return s.sync.running
	})
	var others []<-chan error
	for i := 2; i <= 8; i++ {
		others = append(others, saveAsync(s, fmt.Sprintf("/node-%d:9999", i), int64(i+1)))
	}
	testkit.WaitFor(t, "every probe's record committed", func() bool {
		s.sync.mu.Lock()
		defer s.sync.mu.Unlock()
		return len(s.sync.queue) == 8
	})
	select {
	case err := <-leader:
		t.Fatalf("the lingering save returned before its sync (err %v)", err)
	default:
	}
	close(s.sync.endLinger)
	for _, c := range append(others, leader) {
		if err := <-c; err != nil {
			t.Fatal(err)
		}
	}
	if got := s.Stats().Syncs - syncs0; got != 1 {
		t.Errorf("8 probes saved during one linger made %d syncs, want 1", got)
	}
	if got := s.Stats().Writes; got != 9 {
		t.Errorf("writes: %d, want 9", got)
	}
}

// within waits for a save's error; testkit.WaitTimeout without one is a
// save that lingered (the test's linger is an hour).
func within(t *testing.T, what string, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(testkit.WaitTimeout):
		t.Fatalf("%s: no answer after %s: it lingered", what, testkit.WaitTimeout)
	}
}

// A lone probe (no sync recently) and a save of every node never linger:
// they sync at once.
func TestLoneSavesDoNotLinger(t *testing.T) {
	s, _ := open(t, filepath.Join(t.TempDir(), "state.json"))
	s.sync.lingerFor = time.Hour

	within(t, "the first save", saveAsync(s, "/node-0:9999", 1)) // no sync before it
	s.sync.busyWithin = 0                                        // the latest sync is no longer recent
	within(t, "a probe after a quiet while", saveAsync(s, "/node-0:9999", 2))
	s.sync.busyWithin = time.Hour // busy, but a save of every node never lingers
	all := make(chan error, 1)
	go func() {
		_, err := s.SaveAll([]Node{{Key: "/node-0:9999", State: fixed(state(3))}, {Key: "/node-1:9999", State: fixed(state(3))}})
		all <- err
	}()
	within(t, "a save of every node", all)
	if got := s.Stats().Syncs; got != 3 {
		t.Errorf("syncs: %d, want 3 (one per save)", got)
	}
}
