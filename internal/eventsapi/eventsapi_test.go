package eventsapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
	"github.com/indexima-exporter/indexima_exporter/event"
	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
	"github.com/indexima-exporter/indexima_exporter/poller"
	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// server serves /events of a poller configured with two clusters (never
// polled: no console is called to answer).
func server(t *testing.T) *httptest.Server {
	t.Helper()
	p := poller.New(poller.Options{})
	p.SetClusters([]poller.Cluster{
		{Name: "prod", Nodes: []poller.Node{{Name: "core-1", Target: apiclient.Node{Host: "core-1.example", Port: 9999}}}},
		{Name: "test", Nodes: []poller.Node{{Name: "edge", Target: apiclient.Node{Host: "edge.example", Port: 9999}}}},
	})
	srv := httptest.NewServer(Handler(p))
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, method, url string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, b := testkit.Do(t, req)
	return resp.StatusCode, resp.Header, string(b)
}

// A bad parameter is a 400 whose JSON body says what is wrong in one
// sentence naming it; a name the configuration does not hold is a 404.
func TestBadParametersAreRefusedClearly(t *testing.T) {
	srv := server(t)
	for _, c := range []struct {
		query  string
		status int
		names  string // what the error must name
	}{
		{"?since=yesterday", 400, `since="yesterday"`},
		{"?since=2026-03-10", 400, `since="2026-03-10"`},
		{"?since=", 200, ""},
		{"?limit=10", 400, `"limit"`},
		{"?node=a&node=b", 400, `"node" given 2 times`},
		{"?since=1&x=%zz", 400, "does not parse"},
		{"?cluster=staging", 404, `"staging"`},
		{"?node=core-9", 404, `"core-9"`},
		{"?cluster=test&node=core-1", 404, `"core-1" in the configuration (cluster "test")`},
		{"?node=core-1&since=1773144000000", 200, ""},
		{"?node=edge.example:9999&since=2026-03-10T12:00:00.5%2B01:00", 200, ""},
	} {
		status, h, body := get(t, http.MethodGet, srv.URL+"/events"+c.query)
		if status != c.status || h.Get("Content-Type") != "application/json" {
			t.Errorf("%s: status %d (%s), want %d: %s", c.query, status, h.Get("Content-Type"), c.status, body)
			continue
		}
		if strings.Contains(body, "goroutine") || strings.Contains(body, ".go:") || strings.Count(body, "\n") != 1 {
			t.Errorf("%s: the body is not one line of JSON: %q", c.query, body)
		}
		if c.status == 200 {
			var a Answer
			if err := json.Unmarshal([]byte(body), &a); err != nil || a.Events == nil {
				t.Errorf("%s: %v: %s", c.query, err, body)
			}
			continue
		}
		var p Problem
		if err := json.Unmarshal([]byte(body), &p); err != nil || !strings.Contains(p.Error, c.names) {
			t.Errorf("%s: error %q (%v), want one naming %s", c.query, p.Error, err, c.names)
		}
	}
	if status, h, _ := get(t, http.MethodPost, srv.URL+"/events"); status != http.StatusMethodNotAllowed || h.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d, Allow %q", status, h.Get("Allow"))
	}
}

func counted(typ string, date int64, comment string) tracker.CountedEvent {
	return tracker.CountedEvent{Event: event.Event{Type: typ, Date: date, Duration: 10, HasDuration: true, Comment: comment}, Nth: 1}
}

// The events of the nodes asked, dated since the time asked, the oldest
// first whatever node they come from.
func TestEventsSelectsAndOrders(t *testing.T) {
	t0 := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC).UnixMilli()
	clusters := []poller.ClusterStatus{
		{Name: "prod", Nodes: []poller.NodeStatus{
			{Cluster: "prod", Name: "core-1", Target: "c1:9999", Events: []tracker.CountedEvent{
				counted("TABLE_LOADED", t0+3000, "<b>sales</b>"), counted("NODE_DOWN", t0+1000, "2")}},
			{Cluster: "prod", Name: "core-2", Target: "c2:9999", Events: []tracker.CountedEvent{
				counted("MEMORY_LOW", t0+2000, "")}},
		}},
		{Name: "test", Nodes: []poller.NodeStatus{
			{Cluster: "test", Name: "core-1", Target: "t1:9999", Events: []tracker.CountedEvent{
				counted("CLUSTER_START", t0, "")}},
		}},
	}
	list := func(q query) string {
		t.Helper()
		a, status, err := events(clusters, q)
		if err != nil || status != 200 {
			t.Fatalf("%+v: %d %v", q, status, err)
		}
		var out []string
		for _, l := range a.Events {
			out = append(out, l.Cluster+"/"+l.Node+" "+l.Type)
		}
		return strings.Join(out, ", ")
	}
	for _, c := range []struct {
		q    query
		want string
	}{
		{query{}, "test/core-1 CLUSTER_START, prod/core-1 NODE_DOWN, prod/core-2 MEMORY_LOW, prod/core-1 TABLE_LOADED"},
		{query{since: t0 + 1500}, "prod/core-2 MEMORY_LOW, prod/core-1 TABLE_LOADED"},
		{query{node: "core-1"}, "test/core-1 CLUSTER_START, prod/core-1 NODE_DOWN, prod/core-1 TABLE_LOADED"},
		{query{cluster: "prod", clusterSet: true, node: "core-1"}, "prod/core-1 NODE_DOWN, prod/core-1 TABLE_LOADED"},
		{query{node: "c2:9999"}, "prod/core-2 MEMORY_LOW"},
		{query{cluster: "test", clusterSet: true, since: t0 + 1}, ""},
	} {
		if got := list(c.q); got != c.want {
			t.Errorf("%+v:\n got %s\nwant %s", c.q, got, c.want)
		}
	}
	a, _, _ := events(clusters, query{node: "c1:9999"})
	if a.Events[1].Comment != "<b>sales</b>" || a.Events[0].DownNode != "2" {
		t.Errorf("lines %+v", a.Events)
	}
}
