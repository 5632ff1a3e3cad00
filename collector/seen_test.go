package collector

import (
	"testing"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
)

// The multiset rule: k occurrences in a response, c counted before, max(0,
// k-c) new, max(k, c) remembered.
func TestSeenMultiset(t *testing.T) {
	var s seenSet
	ev := apiclient.Event{Type: "SAVE_METADATA", Date: 1000, Duration: 3, HasDuration: true, Comment: "2"}
	fp := fingerprint(ev)
	response := func(k int) (fresh int) {
		for i := 0; i < k; i++ {
			if s.observe(fp, ev.Date) {
				fresh++
			}
		}
		s.endResponse()
		return fresh
	}
	for _, step := range []struct{ k, want int }{{2, 2}, {2, 0}, {3, 1}, {1, 0}, {0, 0}, {5, 2}} {
		if got := response(step.k); got != step.want {
			t.Fatalf("response of %d: %d new, want %d", step.k, got, step.want)
		}
	}
	other := ev
	other.HasDuration = false
	if fingerprint(other) == fp {
		t.Error("a missing duration has the fingerprint of a present one")
	}
}

// The set stays within its cap and its floor rises past what it forgets; a
// burst at one millisecond is kept whole (up to a hard bound).
func TestSeenCapAndFloor(t *testing.T) {
	var s seenSet
	for i := 0; i < 5*seenCap; i++ {
		s.observe(fingerprint(apiclient.Event{Type: "T", Date: int64(i)}), int64(i))
	}
	s.endResponse()
	if len(s.Entries) > seenCap {
		t.Fatalf("%d entries, cap %d", len(s.Entries), seenCap)
	}
	if s.Floor != int64(5*seenCap-seenCap) {
		t.Errorf("floor %d, want %d", s.Floor, 5*seenCap-seenCap)
	}
	var b seenSet
	for i := 0; i < 2*seenCap; i++ {
		b.observe(fingerprint(apiclient.Event{Type: "T", Date: 7, Comment: string(rune('a'+i%26)) + string(rune(i))}), 7)
	}
	if len(b.Entries) != 2*seenCap || b.Floor != 0 {
		t.Errorf("one-millisecond burst not kept whole: %d entries, floor %d", len(b.Entries), b.Floor)
	}
	b.raiseFloor(8)
	if len(b.Entries) != 0 {
		t.Errorf("raiseFloor kept %d entries", len(b.Entries))
	}
}

func TestSanitizeLabel(t *testing.T) {
	for in, want := range map[string]string{
		"  sales.orders ": "sales.orders",
		"a\xffb":          "a\uFFFDb",
	} {
		if got := sanitizeLabel(in); got != want {
			t.Errorf("sanitizeLabel(%q) = %q, want %q", in, got, want)
		}
	}
	long := ""
	for i := 0; i < 50; i++ {
		long += "€" // 3 bytes
	}
	if got := sanitizeLabel(long); len(got) != 126 {
		t.Errorf("cut to %d bytes, want 126 (rune boundary under 128)", len(got))
	}
}
