package apiclient

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/indexima-exporter/indexima_exporter/event"
)

// listingRequest builds the HTTP request of the listing endpoint q selects:
// get/lastevents/:time or get/event/{asc,desc}/:start/:end/:limit.
func listingRequest(node Node, q event.Query) (*request, error) {
	rq := &request{monitor: true, node: node, method: http.MethodGet}
	if q.IsSince() {
		rq.endpoint, rq.path = EndpointLastEvents, "/api/monitor/get/lastevents/"+strconv.FormatInt(q.Since, 10)
		return rq, nil
	}
	switch q.Order {
	case event.Asc:
		rq.endpoint = EndpointEventAsc
	case event.Desc:
		rq.endpoint = EndpointEventDesc
	default:
		return nil, &Error{Kind: KindRefused, Endpoint: EndpointEventAsc, Node: node.String(),
			Err: fmt.Errorf("unknown order %q (want asc or desc; a zero Query is neither: use event.Since or event.Range)", truncate(string(q.Order), 20))}
	}
	if q.Limit < 0 {
		return nil, &Error{Kind: KindRefused, Endpoint: rq.endpoint, Node: node.String(),
			Err: fmt.Errorf("negative limit %d", q.Limit)}
	}
	rq.path = fmt.Sprintf("/api/monitor/get/event/%s/%d/%d/%d", q.Order, q.Start, q.End, q.Limit)
	return rq, nil
}

// escapeSegment escapes a path segment, "/" included; "." and ".." are
// escaped too, so that no server or proxy resolves them as path steps.
func escapeSegment(s string) string {
	switch s {
	case ".":
		return "%2E"
	case "..":
		return "%2E%2E"
	}
	return url.PathEscape(s)
}
