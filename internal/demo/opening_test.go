package demo

import (
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	dto "github.com/prometheus/client_model/go"
)

// The opening shows a newcomer every kind of change through the real
// collector: NODE_DOWN, MEMORY_LOW, HYPER_INDEX_UNLOADED, TABLE_LOADED
// counted, and the cluster state moving through stopped and back to ready.
// The opening's waits are shortened; the simulated clock runs as in --demo.
func TestOpeningShowsEveryKindOfChange(t *testing.T) {
	d, err := Start(log.NewNopLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.pace = 0.05

	reg, _, _, _ := exporterOf(t, d)
	if _, err := reg.Gather(); err != nil { // first contact
		t.Fatal(err)
	}
	d.Play()

	wantEvents := []string{"NODE_DOWN", "MEMORY_LOW", "HYPER_INDEX_UNLOADED", "TABLE_LOADED", "CLUSTER_STOP", "CLUSTER_START"}
	seenStates := map[string]bool{}
	readyAgain := false // ready seen after stopped
	deadline := time.Now().Add(30 * time.Second)
	for {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		counted := map[string]float64{}
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				switch mf.GetName() {
				case "indexima_events_total":
					counted[label(m, "event")] += m.GetCounter().GetValue()
				case "indexima_cluster_state":
					if st := label(m, "state"); m.GetGauge().GetValue() == 1 {
						readyAgain = readyAgain || (st == "ready" && seenStates["stopped"])
						seenStates[st] = true
					}
				}
			}
		}
		var missing []string
		for _, ev := range wantEvents {
			if counted[ev] == 0 {
				missing = append(missing, ev)
			}
		}
		if !seenStates["stopped"] {
			missing = append(missing, "state stopped")
		}
		if !readyAgain {
			missing = append(missing, "state ready after stopped")
		}
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30s still not seen: %s (counted %v, states %v)", strings.Join(missing, ", "), counted, seenStates)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func label(m *dto.Metric, name string) string {
	for _, lp := range m.GetLabel() {
		if lp.GetName() == name {
			return lp.GetValue()
		}
	}
	return ""
}
