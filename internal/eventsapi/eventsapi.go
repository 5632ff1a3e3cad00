// Package eventsapi serves /events: the latest counted events of each node
// (poller.RecentEvents per node, since the exporter started), as JSON from
// memory, in the lines of the event log (eventlog.Line). Asking calls no
// console.
package eventsapi

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/indexima-exporter/indexima_exporter/eventlog"
	"github.com/indexima-exporter/indexima_exporter/poller"
)

// Answer is the body of a 200: the events, the oldest dated first.
type Answer struct {
	Events []eventlog.Line `json:"events"`
}

// Problem is the body of an answer other than 200.
type Problem struct {
	Error string `json:"error"`
}

// query is what /events was asked.
type query struct {
	cluster, node string
	clusterSet    bool
	since         int64 // Unix ms; events dated before it are left out
}

// parameters are the names /events takes.
var parameters = []string{"cluster", "node", "since"}

// Handler serves /events?cluster=&node=&since=: every parameter optional;
// cluster and node select by name (node also by host:port), since is an
// RFC 3339 time or Unix milliseconds.
func Handler(exp *poller.Poller) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			answer(w, http.StatusMethodNotAllowed, Problem{"use GET"})
			return
		}
		q, err := parse(req)
		if err != nil {
			answer(w, http.StatusBadRequest, Problem{err.Error()})
			return
		}
		out, status, err := events(exp.Status(), q)
		if err != nil {
			answer(w, status, Problem{err.Error()})
			return
		}
		answer(w, http.StatusOK, out)
	}
}

// parse reads the query string: only the known parameters, each at most
// once.
func parse(req *http.Request) (query, error) {
	var q query
	values, err := url.ParseQuery(req.URL.RawQuery)
	if err != nil {
		return q, fmt.Errorf("the query string does not parse (%v); use cluster=, node= and since=", err)
	}
	for name, vs := range values {
		if !slices.Contains(parameters, name) {
			return q, fmt.Errorf("unknown parameter %q: /events takes %s", name, strings.Join(parameters, ", "))
		}
		if len(vs) > 1 {
			return q, fmt.Errorf("parameter %q given %d times: give it once", name, len(vs))
		}
	}
	q.cluster, q.clusterSet = values.Get("cluster"), values.Has("cluster") && values.Get("cluster") != ""
	q.node = values.Get("node")
	if s := values.Get("since"); s != "" {
		since, err := parseSince(s)
		if err != nil {
			return q, err
		}
		q.since = since
	}
	return q, nil
}

// parseSince reads an RFC 3339 time or Unix milliseconds.
func parseSince(s string) (int64, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return ms, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("since=%q: give an RFC 3339 time (2026-03-10T12:00:00Z) or Unix milliseconds", s)
	}
	return t.UnixMilli(), nil
}

// events selects the events of q among the nodes' status, the oldest
// first. A cluster or node the configuration does not hold is a 404.
func events(clusters []poller.ClusterStatus, q query) (Answer, int, error) {
	out := Answer{Events: []eventlog.Line{}}
	clusterFound, nodeFound := false, false
	for _, c := range clusters {
		if q.clusterSet && c.Name != q.cluster {
			continue
		}
		clusterFound = true
		for _, n := range c.Nodes {
			if q.node != "" && n.Name != q.node && n.Target != q.node {
				continue
			}
			nodeFound = true
			ref := poller.NodeRef{Cluster: n.Cluster, Name: n.Name, Target: n.Target}
			for _, e := range n.Events {
				if e.Date >= q.since {
					out.Events = append(out.Events, eventlog.LineOf(ref, e))
				}
			}
		}
	}
	switch {
	case q.clusterSet && !clusterFound:
		return out, http.StatusNotFound, fmt.Errorf("no cluster %q in the configuration", q.cluster)
	case q.node != "" && !nodeFound:
		return out, http.StatusNotFound, fmt.Errorf("no node %q in the configuration%s", q.node, inCluster(q))
	}
	slices.SortStableFunc(out.Events, func(a, b eventlog.Line) int { return cmp.Compare(a.DateMS, b.DateMS) })
	return out, http.StatusOK, nil
}

func inCluster(q query) string {
	if q.clusterSet {
		return fmt.Sprintf(" (cluster %q)", q.cluster)
	}
	return ""
}

func answer(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status, body = http.StatusInternalServerError, []byte(`{"error":"the answer could not be encoded"}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}
