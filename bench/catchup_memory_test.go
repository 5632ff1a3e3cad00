package bench

import "testing"

// Reading a backlog is streamed: what it allocates per event does not grow
// with the backlog (no per-event retention, no structure that grows with
// it), and the live heap does not grow by anything like the backlog's size.
// Ratios and sizes, not times: this test cannot be made to pass or fail by
// a slow machine.
func TestCatchUpMemoryIsFlat(t *testing.T) {
	small, large := 10_000, 200_000
	if testing.Short() {
		large = 50_000
	}
	cost := func(n int) (catchUpCost, *backlog) {
		bl := recordBacklog(t, n)
		return measureCatchUp(t, bl.replay(t), bl), bl
	}
	s, _ := cost(small)
	l, bl := cost(large)
	t.Logf("%d events: %.1f B/event, %.3f allocs/event, live heap growth %d KiB", small, s.bytesPerEvent, s.allocsPerEvent, s.liveGrowth>>10)
	t.Logf("%d events: %.1f B/event, %.3f allocs/event, live heap growth %d KiB (listing %d KiB)", large, l.bytesPerEvent, l.allocsPerEvent, l.liveGrowth>>10, bl.bytes>>10)
	if l.allocsPerEvent > 1.25*s.allocsPerEvent+0.01 {
		t.Errorf("allocations per event grow with the backlog: %.3f at %d events, %.3f at %d", s.allocsPerEvent, small, l.allocsPerEvent, large)
	}
	if l.bytesPerEvent > 1.25*s.bytesPerEvent+1 {
		t.Errorf("bytes allocated per event grow with the backlog: %.1f at %d events, %.1f at %d", s.bytesPerEvent, small, l.bytesPerEvent, large)
	}
	// Holding the listing, or one struct per event, would take at least
	// a few times this much.
	if limit := bl.bytes / 4; l.liveGrowth > limit {
		t.Errorf("the live heap grew by %d KiB while reading a %d KiB listing: the backlog is being held in memory", l.liveGrowth>>10, bl.bytes>>10)
	}
}
