package collector

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/poller"
)

// down_node names the node reported down as the configuration does when
// the report is read: the name of the cluster's node of the number in the
// NODE_DOWN comment, the comment itself when no node has that number. The
// latest report's time is a gauge per down node, in seconds. A comment
// that already is a node's name and that node's number make one series,
// not two. A reload does not rename the reports read before it.
func TestNodeDownNamedByConfiguredNumber(t *testing.T) {
	e := newEnv(t, simulator.Config{}, 2, testOptions{})
	one, two := e.nodes[0], e.nodes[1]
	c := e.cluster("", e.nodes...)
	number := 4
	c.Nodes[1].Number = &number
	e.p.SetClusters([]poller.Cluster{c})
	e.scrape(nil) // first contact

	at := e.nowMS()
	e.sim.Append(one,
		simulator.Event{Type: simulator.NodeDown, Date: at + 1, Duration: 1, Comment: "4"},
		simulator.Event{Type: simulator.NodeDown, Date: at + 2, Duration: 1, Comment: "04"},
		simulator.Event{Type: simulator.NodeDown, Date: at + 3, Duration: 1, Comment: two},
		simulator.Event{Type: simulator.NodeDown, Date: at + 900, Duration: 1, Comment: "9"})
	e.clock.Advance(2 * time.Second)
	m := e.scrape(nil)

	var names []string
	for _, s := range m.series("indexima_node_down_reports_total", l("node", one)) {
		names = append(names, s.labels["down_node"])
	}
	sort.Strings(names)
	want := []string{two, "9"}
	sort.Strings(want)
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("down_node values %v, want %v (4 and 04 named %s, 9 unknown)", names, want, two)
	}
	if got := m.value(t, "indexima_node_down_reports_total", l("node", one, "down_node", two)); got != 3 {
		t.Errorf("reports of %s = %v, want 3 (4, 04 and its name)", two, got)
	}
	if got := m.value(t, "indexima_node_down_last_report_timestamp_seconds", l("node", one, "down_node", two)); got != float64(at+3)/1000 {
		t.Errorf("latest report of %s at %v, want %v", two, got, float64(at+3)/1000)
	}
	if got := m.value(t, "indexima_node_down_last_report_timestamp_seconds", l("node", one, "down_node", "9")); got != float64(at+900)/1000 {
		t.Errorf("latest report of 9 at %v, want %v", got, float64(at+900)/1000)
	}
	if got := m.series("indexima_node_down_last_report_timestamp_seconds", l("node", two)); len(got) != 0 {
		t.Errorf("node %s reported nothing, has %d latest-report series", two, len(got))
	}

	// A reload without the number: the reports read before keep their
	// name; a report read after it carries the number.
	e.p.SetClusters([]poller.Cluster{e.cluster("", e.nodes...)})
	if got := e.scrape(nil).value(t, "indexima_node_down_reports_total", l("node", one, "down_node", two)); got != 3 {
		t.Errorf("after the reload, reports of %s = %v, want still 3", two, got)
	}
	e.sim.Append(one, simulator.Event{Type: simulator.NodeDown, Date: e.nowMS() + 1, Duration: 1, Comment: "4"})
	e.clock.Advance(2 * time.Second)
	m = e.scrape(nil)
	if got := m.value(t, "indexima_node_down_reports_total", l("node", one, "down_node", "4")); got != 1 {
		t.Errorf("reports of 4 read without its number configured = %v, want 1", got)
	}
	if got := m.value(t, "indexima_node_down_reports_total", l("node", one, "down_node", two)); got != 3 {
		t.Errorf("reports of %s = %v, want still 3", two, got)
	}
}
