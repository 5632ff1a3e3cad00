package bench

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/bench/harness"
)

// The load harness on a small cluster, so CI runs its code: the real
// exporter binary against the simulator. In the steady state each node
// costs exactly two console calls per scrape (lastevents and event/count;
// version is cached), and the whole run logs in once.
func TestHarnessSmallCluster(t *testing.T) {
	bin, err := harness.BuildExporter(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	checkBuiltAsReleased(t, bin)
	var progress strings.Builder
	rows, err := harness.Run(harness.Options{
		Nodes:          []int{3},
		Rate:           -1, // no background events: nothing running, nothing to look up
		NodeScrapes:    12,
		MinScrapes:     4,
		Latency:        20 * time.Millisecond,
		LatencyScrapes: 2,
		Day:            true,
		DaySteps:       4,
		ExporterBin:    bin,
		Log:            &progress,
		Timeout:        3 * time.Minute,
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1", len(rows))
	}
	r := rows[0]
	var table strings.Builder
	harness.WriteTable(&table, rows)
	t.Log("\n" + table.String())
	if r.Scrapes != 4 {
		t.Errorf("%d steady scrapes, want 4", r.Scrapes)
	}
	if r.RequestsPerNodeScrape != 2 || r.MaxRequestsPerNodeScrape != 2 {
		t.Errorf("console calls per node per scrape: mean %.2f, busiest node %.2f; want 2 and 2 (by endpoint: %v)",
			r.RequestsPerNodeScrape, r.MaxRequestsPerNodeScrape, r.RequestsByEndpoint)
	}
	for _, ep := range []string{"lastevents", "event_count"} {
		if got := r.RequestsByEndpoint[ep]; got != 3*r.Scrapes {
			t.Errorf("%s calls: %d, want one per node and scrape (%d)", ep, got, 3*r.Scrapes)
		}
	}
	if r.Logins != 1 {
		t.Errorf("%d logins over the run, want 1", r.Logins)
	}
	if r.SlowestNodeCalls != 2 || r.ScrapeMedian < 2*r.Latency {
		t.Errorf("latency phase: slowest node made %d calls, median scrape %s with %s per call; want 2 calls and at least %s",
			r.SlowestNodeCalls, r.ScrapeMedian, r.Latency, 2*r.Latency)
	}
	if r.CPUPerNodeScrape <= 0 && r.Scrapes*3 > 1000 {
		t.Errorf("no CPU time measured")
	}
	if r.RSS <= 0 || r.Day == nil || r.Day.RSS <= 0 || r.Day.Scrapes != 4 {
		t.Errorf("memory or day phase not measured: RSS %d, day %+v", r.RSS, r.Day)
	}
}

// -compare runs two exporters side by side on clusters of the same seed,
// taking turns: here the same binary twice, on a small cluster.
func TestHarnessCompare(t *testing.T) {
	bin, err := harness.BuildExporter(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var progress strings.Builder
	// The same binary twice, the second with the event log (CompareArgs).
	eventLog := filepath.Join(t.TempDir(), "events.log")
	rows, err := harness.Compare(harness.Options{
		Nodes: []int{3}, NodeScrapes: 12, MinScrapes: 4, ExporterBin: bin, Rate: 1,
		Args: []string{"--no-collector.tables"}, CompareArgs: []string{"--events.log=" + eventLog},
		Log: &progress, Timeout: 3 * time.Minute,
	}, bin)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	var table strings.Builder
	harness.WriteCompareTable(&table, rows)
	t.Log("\n" + table.String())
	if len(rows) != 1 || rows[0].N != 3 || rows[0].Scrapes != 4 {
		t.Fatalf("rows %+v, want one of 3 nodes and 4 scrapes", rows)
	}
	r := rows[0]
	if r.RSSA <= 0 || r.RSSB <= 0 || r.WallA <= 0 || r.WallB <= 0 {
		t.Errorf("both exporters must have been measured: %+v", r)
	}
	// Every scrape allocates (the polls, the answer): read from the
	// exporter's own Go metrics (the collections too: their reading is
	// TestGCAndAllocsReadsTheGoCollector's).
	if r.AllocA <= 0 || r.AllocB <= 0 {
		t.Errorf("allocations per scrape not read: %+v", r)
	}
	if b, err := os.ReadFile(eventLog); err != nil || bytes.Count(b, []byte("\n")) == 0 {
		t.Errorf("the second exporter was not given its flag: its event log holds %d bytes (%v)", len(b), err)
	}
}

// checkBuiltAsReleased checks that the harness measures the binary the
// release archives and the image hold (scripts/release builds them so):
// no cgo (a build with it maps the C library too, 1.5 MiB of the day's
// RSS), no symbol table or DWARF, no build directory.
func checkBuiltAsReleased(t *testing.T, bin string) {
	t.Helper()
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	for key, want := range map[string]string{"CGO_ENABLED": "0", "-trimpath": "true"} {
		if got := settings[key]; got != want {
			t.Errorf("the harness's exporter is built with %s=%q, the release's with %q", key, got, want)
		}
	}
	// -trimpath leaves -ldflags out of the build settings: the sections tell.
	f, err := elf.Open(bin)
	if err != nil {
		if runtime.GOOS == "linux" {
			t.Fatal(err)
		}
		return // another format than ELF: the settings above are checked
	}
	defer f.Close()
	for _, name := range []string{".symtab", ".debug_info", ".zdebug_info"} {
		if f.Section(name) != nil {
			t.Errorf("the harness's exporter has a %s section: the release's is built with -ldflags=\"-s -w\"", name)
		}
	}
}
