package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/bench/harness"
)

// The state store's cost follows what changed, counted rather than timed:
// through /probe, each probe writes one node's state (not every node's, as
// the single state file did), and through /metrics a scrape writes each
// node once and syncs once. The real binary, the load harness's state
// table on a small cluster.
func TestStateStoreWritesWhatAScrapePolled(t *testing.T) {
	bin, err := harness.BuildExporter(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const nodes = 12
	var progress strings.Builder
	rows, err := harness.RunState(harness.StateOptions{Nodes: nodes, Rounds: 3, Scrapes: 3, Parallel: 4,
		ExporterBin: bin, Log: &progress, Timeout: 3 * time.Minute})
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	var table strings.Builder
	harness.WriteStateTable(&table, rows)
	t.Log("\n" + table.String())
	var probe, metrics *harness.StateRow
	for i, r := range rows {
		switch {
		case r.Store && r.Endpoint == "/probe":
			probe = &rows[i]
		case r.Store && r.Endpoint == "/metrics":
			metrics = &rows[i]
		case !r.Store && r.Writes != 0:
			t.Errorf("%s without the store: %v writes", r.Endpoint, r.Writes)
		}
	}
	if probe == nil || metrics == nil {
		t.Fatalf("rows: %+v", rows)
	}
	perWrite := metrics.Bytes / metrics.Writes // one node's record
	if w := probe.Writes / float64(probe.NodeScrapes); w > 1 {
		t.Errorf("%.2f node writes per probe, want at most 1 (its own node)", w)
	}
	if b := probe.Bytes / float64(probe.NodeScrapes); b > 1.5*perWrite {
		t.Errorf("%.0f bytes written per probe, one node's state is %.0f: more than the probed node's", b, perWrite)
	}
	if w := metrics.Writes / float64(metrics.NodeScrapes); w > 1 {
		t.Errorf("%.2f writes per node and /metrics scrape, want at most 1", w)
	}
	if s := metrics.Syncs / float64(metrics.NodeScrapes/nodes); s > 1 {
		t.Errorf("%.2f syncs per /metrics scrape, want 1 (one for all its nodes)", s)
	}
}
