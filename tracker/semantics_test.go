package tracker

import "testing"

// The count semantics verdict: two votes of margin, contrary votes move it
// back, a coincidence (count = known + running) is no vote, and a futile
// search on a console that never lists running events marks it as one that
// hides them.
func TestSemanticsVotes(t *testing.T) {
	var s Semantics
	s.vote(3, 3, 0) // count = known + running: could be misses, no vote
	if s.Detected() != CountUnknown || s.Score != 0 {
		t.Fatalf("a coincidence voted: %+v", s)
	}
	s.runningsListed(500) // the poll's listing showed running events
	s.futile(3, 0, 1000)
	s.futile(3, 0, 2000)
	if s.Detected() != CountRunning {
		t.Fatalf("two futile searches with running events listed: %+v", s)
	}
	if s.Unlisted {
		t.Fatalf("a console that lists running events taken as hiding them: %+v", s)
	}
	for i := 0; i < 4; i++ {
		s.vote(2, 0, -2) // count no larger than known, running listed
	}
	if s.Detected() != CountCompleted {
		t.Fatalf("contrary votes did not move the verdict back: %+v", s)
	}
	s.found(3, 2, 1) // found more than count - known - running: not counting running
	if s.Score != -3 {
		t.Fatalf("score %d after a search that found more than the running ones leave", s.Score)
	}

	var hidden Semantics
	hidden.futile(4, 4, 10)
	hidden.futile(4, 4, 20)
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
