package apiclient

import (
	"net/http"
)

// viaNetHTTP sends req through net/http's Transport (t.fallback): a console
// that speaks HTTP/2, and every call through a proxy. net/http bounds the
// heads itself, with MaxResponseHeaderBytes set to maxHeadBytes: over
// HTTP/1 for all the heads of an answer together, over HTTP/2 as the
// header list size announced to the console, and its interim answers'
// together (an endless series of interim answers ends within maxHeadBytes,
// after about 400 of them, in net/http's words). The count of header
// fields is checked here, so that an answer with more than maxHeaderFields
// is refused whichever way it came.
func (t *directTransport) viaNetHTTP(req *http.Request) (*http.Response, error) {
	resp, err := t.fallback.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if fields := headerFields(resp.Header); fields > maxHeaderFields {
		_ = resp.Body.Close()
		return nil, tooManyFields(fields)
	}
	return resp, nil
}
