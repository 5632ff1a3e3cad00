package statuspage

import (
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/poller"
)

// In the table of polls, a failed poll shows its reason, and its error
// below it only when it differs from the error above (the card's Outcome
// holds the latest one): ten polls failing alike take ten short rows.
func TestStatusPollErrorsAreShownOnceInARow(t *testing.T) {
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	fail := func(ago time.Duration, err string) poller.PollRecord {
		return poller.PollRecord{Start: now.Add(-ago), Duration: 3 * time.Millisecond, Calls: 1, Reason: "node_unreachable", Error: err}
	}
	a, b := "node unreachable: endpoint lastevents status 502", "node unreachable: endpoint event_count status 503"
	n := poller.NodeStatus{Name: "n", Target: "n:9999", Polls: []poller.PollRecord{
		fail(1*time.Second, a), fail(2*time.Second, a), fail(3*time.Second, b), fail(4*time.Second, b),
		{Start: now.Add(-5 * time.Second), Duration: 900 * time.Microsecond, Calls: 2, EventsCounted: 4},
		fail(6*time.Second, "deadline exceeded"),
	}}
	page := buildStatusPage([]poller.ClusterStatus{{Nodes: []poller.NodeStatus{n}}}, now, redactor{})
	sn := page.Clusters[0].Nodes[0]
	if sn.State != "down" || sn.Last.Outcome != a || sn.Last.Ago != "1s" {
		t.Fatalf("last poll %+v, state %s", sn.Last, sn.State)
	}
	var details []string
	for _, p := range sn.Polls {
		details = append(details, p.Detail)
	}
	want := []string{"", "", b, "", "", "node unreachable: deadline exceeded"}
	if strings.Join(details, "|") != strings.Join(want, "|") {
		t.Errorf("details\n got %q\nwant %q", details, want)
	}
	if sn.Polls[4].Short != "ok" || sn.Polls[4].Duration != "<1ms" || sn.Polls[0].Short != "node unreachable" {
		t.Errorf("rows %+v", sn.Polls)
	}
}

// The alerts' status_url annotations (mixin/alerts.libsonnet) link to a
// node's card as #node-[<cluster>-]<name> and to a cluster's section as
// #cluster[-<cluster>]: the page must have exactly those ids.
func TestStatusAnchorsOfTheAlertLinks(t *testing.T) {
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		cluster string
		ids     []string
	}{
		{"", []string{`id="cluster"`, `id="node-core-4"`}},
		{"prod", []string{`id="cluster-prod"`, `id="node-prod-core-4"`}},
	} {
		page := buildStatusPage([]poller.ClusterStatus{{Name: tc.cluster, Nodes: []poller.NodeStatus{
			{Cluster: tc.cluster, Name: "core-4", Target: "core-4:9999"}}}}, now, redactor{})
		var b strings.Builder
		if err := statusTemplate.Execute(&b, page); err != nil {
			t.Fatal(err)
		}
		for _, id := range tc.ids {
			if strings.Count(b.String(), id) != 1 {
				t.Errorf("cluster %q: the page has %d %s, want 1", tc.cluster, strings.Count(b.String(), id), id)
			}
		}
	}
}
