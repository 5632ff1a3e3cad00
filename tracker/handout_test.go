package tracker

import (
	"testing"

	"github.com/indexima-exporter/indexima_exporter/event"
)

// A bounded hand-out keeps the latest counted events, and never more than
// twice the bound while a poll runs; 0 keeps none; HandOutAll every one.
func TestHandOutKeepsTheLatest(t *testing.T) {
	for _, keep := range []int{0, 1, 100, HandOutAll} {
		st := &State{}
		for i := range 1000 {
			st.handOut(event.Event{Type: "T", Date: int64(i)}, 1, "", keep)
			if keep >= 0 && len(st.counted) > 2*max(keep, 1) {
				t.Fatalf("keep %d: %d events held while counting", keep, len(st.counted))
			}
		}
		got := st.takeCounted(keep)
		want := 1000
		if keep >= 0 {
			want = keep
		}
		if len(got) != want {
			t.Fatalf("keep %d: %d events handed out, want %d", keep, len(got), want)
		}
		for i, c := range got {
			if c.Date != int64(1000-want+i) {
				t.Fatalf("keep %d: event %d dated %d, want the latest in order", keep, i, c.Date)
			}
		}
		if st.counted != nil {
			t.Fatalf("keep %d: the state still holds its events", keep)
		}
	}
}
