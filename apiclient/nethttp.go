package apiclient

import (
	"fmt"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"sync/atomic"
)

// viaNetHTTP sends req through net/http's Transport (t.fallback): a console
// that speaks HTTP/2, and every call through a proxy. net/http bounds the
// heads itself (MaxResponseHeaderBytes, set to maxHeadBytes: over HTTP/1
// for all the heads of an answer, over HTTP/2 as the header list size we
// announce, interim answers included); the other bounds of heads.go are
// kept here, so that an answer is refused alike whichever way it came:
// more than maxInterimAnswers interim answers, more than maxHeaderFields
// header fields.
func (t *directTransport) viaNetHTTP(req *http.Request) (*http.Response, error) {
	var interim atomic.Int32
	var refused atomic.Pointer[headLimitError]
	trace := &httptrace.ClientTrace{Got1xxResponse: func(int, textproto.MIMEHeader) error {
		if interim.Add(1) > maxInterimAnswers {
			// Kept aside as well: net/http's HTTP/2 wraps the error in
			// one of its own that does not unwrap to it.
			refused.Store(errTooManyInterim)
			return errTooManyInterim
		}
		return nil
	}}
	resp, err := t.fallback.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
	if err != nil {
		if limit := refused.Load(); limit != nil {
			return nil, limit
		}
		return nil, err
	}
	if fields := headerFields(resp.Header); fields > maxHeaderFields {
		_ = resp.Body.Close()
		return nil, tooManyFields(fields)
	}
	return resp, nil
}

var errTooManyInterim = &headLimitError{what: fmt.Sprintf("more than %d interim (1xx) answers before its final one", maxInterimAnswers)}

func tooManyFields(n int) *headLimitError {
	return &headLimitError{what: fmt.Sprintf("%d header fields, more than %d", n, maxHeaderFields)}
}
