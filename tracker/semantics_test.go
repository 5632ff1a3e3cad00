package tracker

import "testing"

// The count semantics verdict: a search that read every page and leaves an
// excess beside events started and not completed decides includes_running
// at once (a console switched to it is followed within a
// poll); counts below the known events plus the running ones that surely
// started before them are votes for completed, four of them move the
// verdict back; an excess with nothing running is no evidence for
// includes_running; a console that never lists running events but counts
// them is told by the excess a search leaves.
func TestSemanticsVotes(t *testing.T) {
	var s Semantics
	s.vote(3, 3, 0) // count = known + running that started before it: consistent with both
	if s.Detected() != CountUnknown || s.Score != 0 {
		t.Fatalf("a coincidence voted: %+v", s)
	}
	s.runningsListed(500)
	s.searched(3, 0, 1000) // nothing started and not completed: no evidence for running events
	if s.Detected() != CountUnknown {
		t.Fatalf("an excess without running events decided: %+v", s)
	}
	s.searched(5, 3, 1000) // beside running events (and events aborted unseen)
	if s.Detected() != CountRunning || s.Unlisted {
		t.Fatalf("a searched excess of exactly the running events: %+v", s)
	}
	s.vote(0, 2, 0) // count no larger than known, two running since before it
	if s.Detected() != CountRunning {
		t.Fatalf("one contrary vote moved the verdict: %+v", s)
	}
	s.vote(0, 2, 0)
	if s.Detected() != CountCompleted {
		t.Fatalf("two contrary votes did not move the verdict back: %+v", s)
	}
	s.vote(1, 2, 1) // one event may have started after the count and completed before the listing
	if s.Score != -2 {
		t.Fatalf("a race voted: %+v", s)
	}
	s.searched(2, 2, 3000) // the console switched to counting running events
	if s.Detected() != CountRunning {
		t.Fatalf("a switch to includes_running not followed at once: %+v", s)
	}
	s.found(3, 2, 1) // found more than count - known - running: not counting running
	if s.Score != 1 {
		t.Fatalf("score %d after a search that found more than the running ones leave", s.Score)
	}

	var hidden Semantics
	hidden.searched(4, 0, 10)
	hidden.searched(4, 0, 20)
	if !hidden.Unlisted || hidden.Detected() != CountRunning {
		t.Fatalf("a console that never lists running events but counts them: %+v", hidden)
	}
	hidden.runningsListed(30)
	if hidden.Unlisted {
		t.Fatalf("a console that lists running events still taken as hiding them")
	}
}

// The futile-search backoff: the same deficit is searched again after 2, 4,
// ... polls, at once when it grows beyond the running events or the
// semantics changes.
func TestFutileBackoff(t *testing.T) {
	var f Futile
	if !f.shouldSearch(5, 1, CountUnknown) {
		t.Fatal("a first deficit not searched")
	}
	f.searched(5, 1, 0, CountUnknown)
	if f.shouldSearch(5, 1, CountUnknown) {
		t.Fatal("the same deficit searched again at once")
	}
	if !f.shouldSearch(5, 2, CountUnknown) {
		t.Fatal("a deficit grown beyond the running events not searched")
	}
	f.searched(5, 1, 0, CountUnknown)
	if !f.shouldSearch(5, 1, CountRunning) {
		t.Fatal("a change of semantics did not end the backoff")
	}
	f.searched(5, 1, 2, CountRunning)
	if f != (Futile{}) {
		t.Fatalf("a search that found events left a backoff: %+v", f)
	}
}
