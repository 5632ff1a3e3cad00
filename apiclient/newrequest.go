package apiclient

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
)

// consoleURL is the console's URL parsed once, for the requests of calls
// without a body (every call of a poll): http.NewRequestWithContext parsed
// the whole URL again at each call and made a header map that a monitor
// call replaces (reqheaders.go), a fortieth of a poll's CPU at 2000 nodes
// (docs/performance.md, issue 39).
type consoleURL struct {
	base *url.URL // nil: every request through http.NewRequestWithContext
	host string   // the requests' Host, as http.NewRequestWithContext sets it
}

func newConsoleURL(raw string) consoleURL {
	req, err := http.NewRequest(http.MethodGet, raw, nil)
	if err != nil || req.URL.RawPath != "" {
		return consoleURL{}
	}
	return consoleURL{base: req.URL, host: req.Host}
}

// newRequest is http.NewRequestWithContext(ctx, rq.method, raw+rq.path,
// body) (raw the console's URL), with http.NoBody when there is no body: a
// plain path (letters, digits, '/', '.', '-', '_'), which url.Parse leaves
// as it is, is appended to the URL parsed once (TestNewRequestIsNetHTTPs).
// The headers of a monitor call without a body are nil: attempt gives it
// the node's kept ones.
func (cu consoleURL) newRequest(ctx context.Context, raw string, rq *request) (*http.Request, error) {
	if rq.body != nil || cu.base == nil || !plainPath(rq.path) {
		var body io.Reader
		if rq.body != nil {
			body = bytes.NewReader(rq.body)
		}
		req, err := http.NewRequestWithContext(ctx, rq.method, raw+rq.path, body)
		if err == nil && rq.body == nil {
			req.Body = http.NoBody
		}
		return req, err
	}
	u := *cu.base
	u.Path += rq.path
	req := &http.Request{Method: rq.method, URL: &u, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Body: http.NoBody, Host: cu.host}
	if !rq.monitor {
		req.Header = http.Header{}
	}
	return req.WithContext(ctx), nil
}

// plainPath tells whether path holds only bytes that a URL's path keeps
// as they are, escaped or not.
func plainPath(path string) bool {
	for i := 0; i < len(path); i++ {
		switch c := path[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '/', c == '.', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}
