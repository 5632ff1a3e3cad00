package apiclient

import (
	"net/http"
	"sync"
)

// monitorHeaders keeps the request headers of each node's monitor calls
// while the token stays the same: they differ by node and token only, and
// a header map of six fields made at every call was about a tenth of the
// bytes a poll allocated (docs/performance.md, issue 39). A kept map is
// shared by the node's calls, read-only: nothing below attempt writes to
// a request's headers (the direct transport and net/http's only read
// them), and a new token makes a new map rather than changing the one a
// call under way may be sending.
type monitorHeaders struct {
	mu sync.Mutex
	m  map[Node]keptHeader // by node as configured; bounded by the configuration
}

type keptHeader struct {
	token string
	h     http.Header
}

// of returns the headers of a monitor call of rq's node with token, made
// by build when none are kept for that node and token.
func (k *monitorHeaders) of(rq *request, token string, build func(http.Header)) http.Header {
	k.mu.Lock()
	defer k.mu.Unlock()
	if kh, ok := k.m[rq.node]; ok && kh.token == token {
		return kh.h
	}
	h := make(http.Header, 6)
	build(h)
	if k.m == nil {
		k.m = map[Node]keptHeader{}
	}
	k.m[rq.node] = keptHeader{token: token, h: h}
	return h
}
