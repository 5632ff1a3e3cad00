package apiclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-kit/log/level"
)

// request is one HTTP exchange with the console.
type request struct {
	endpoint string // Endpoint* constant
	monitor  bool   // an /api/monitor call, forwarded to node
	node     Node
	method   string
	path     string // escaped, appended to the console URL
	body     []byte // login only
}

func (rq *request) nodeLabel() string {
	if !rq.monitor {
		return ""
	}
	return rq.node.String()
}

// decodeFunc consumes a 2xx body. Its errors are classified by attempt.
type decodeFunc func(b *body) error

// monitorCall runs an /api/monitor call under the per-call timeout: lazy
// login, one attempt, and when the answer suggests that the session behind
// the token is gone, one fresh login (shared with every concurrent caller)
// and one retry. Two answers suggest it: the console refusing the token
// (401/403 or a {"message"} body), and an answer that cannot be the API's (a
// redirect, or a body that is not JSON), which is what a single-sign-on proxy
// in front of the console sends when its session expired: a login page or a
// redirect to one. Only when the fresh token gets such an answer again is it
// the call's error.
func (c *Client) monitorCall(ctx context.Context, rq *request, decode decodeFunc) error {
	if rq.node.Host == "" {
		return &Error{Kind: KindRefused, Endpoint: rq.endpoint, Node: rq.nodeLabel(),
			Err: errors.New("the node has no host name")}
	}
	// The call's own timeout, when it would end before the caller's
	// deadline. A scrape's comes first (its budget is under the timeout's
	// default), and a child context made at every call, registered with
	// the poll's and removed at its end, cost 4 % of the CPU at 2000 nodes
	// for a deadline it did not change (docs/performance.md, issue 39).
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > c.cfg.Timeout {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
	}
	token, gen, err := c.auth.current(ctx)
	if err != nil {
		return err
	}
	why, err := c.attempt(ctx, rq, token, decode)
	if why == fine {
		return err
	}
	if c.cfg.Username == "" {
		if why == refusedToken {
			err = hint(err, "no username is configured: does this console require a login?")
		}
		return err
	}
	msg := "console refused the token, logging in again"
	if why == foreignAnswer {
		msg = "the answer is not the API's (a single-sign-on proxy whose session expired?), logging in again"
	}
	level.Warn(c.logger).Log("msg", msg, "endpoint", rq.endpoint, "node", rq.nodeLabel(), "status", statusOf(err))
	if token, _, err = c.auth.renew(ctx, gen); err != nil {
		return err
	}
	why, err = c.attempt(ctx, rq, token, decode)
	if why != fine {
		err = hint(err, "even right after a new login")
	}
	return err
}

// hint appends a parenthesised remark to an *Error's cause.
func hint(err error, remark string) error {
	var e *Error
	if errors.As(err, &e) {
		e.Err = fmt.Errorf("%w (%s)", e.Err, remark)
	}
	return err
}

func statusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// suspicion tells whether a failed attempt may be cured by a new login.
type suspicion int

const (
	fine          suspicion = iota // success, or an error a new login cannot cure
	refusedToken                   // 401/403, or a 2xx {"message"} body
	foreignAnswer                  // a monitor call answered by a redirect or a non-JSON 2xx body
)

// attempt sends one request and decodes its answer. why tells whether the
// failure may be cured by a new login (see monitorCall); a refusal of the
// token is then an *Error of kind KindBadCredentials (KindMalformed for a
// {"message"} body).
func (c *Client) attempt(ctx context.Context, rq *request, token string, decode decodeFunc) (why suspicion, err error) {
	var sent atomic.Bool
	trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { sent.Store(true) }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), rq.method,
		c.cfg.URL+rq.path, bytes.NewReader(rq.body))
	if err != nil {
		return fine, &Error{Kind: KindRefused, Endpoint: rq.endpoint, Node: rq.nodeLabel(),
			Err: fmt.Errorf("cannot build the request: %w", err)}
	}
	if rq.body == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	if rq.monitor && rq.body == nil {
		req.Header = c.heads.of(rq, token, func(h http.Header) { c.setHeaders(h, rq, token) })
	} else {
		c.setHeaders(req.Header, rq, token)
	}

	start := time.Now()
	code := "error"
	defer func() {
		d := time.Since(start)
		if c.cfg.Observer != nil {
			c.cfg.Observer.ObserveRequest(rq.endpoint, code, d)
		}
		if c.cfg.LogCalls {
			c.debug.Log("msg", "console request", "endpoint", rq.endpoint, "node", rq.nodeLabel(),
				"code", code, "duration", d, "err", err)
		}
	}()

	// The transport itself, not http.Client.Do: the client would copy the
	// request's headers for redirects it must not follow (CheckRedirect
	// refuses them all) and wrap every error in a *url.Error naming the
	// URL, at every call; its redirect policy stays for callers of c.http.
	resp, err := c.http.Transport.RoundTrip(req)
	if err != nil {
		return fine, c.transportError(ctx, rq, err, sent.Load())
	}
	defer drain(resp)
	c.clock.note(resp.Header)
	code = strconv.Itoa(resp.StatusCode)
	if !acquireBodySlot(ctx) {
		return fine, c.transportError(ctx, rq, ctx.Err(), true)
	}
	defer releaseBodySlot()

	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		excerpt, message := readErrorBody(resp)
		e := &Error{Kind: KindBadCredentials, Endpoint: rq.endpoint, Node: rq.nodeLabel(),
			Status: resp.StatusCode, Excerpt: excerpt, Err: errors.New("the console refused the call as unauthenticated")}
		if message != "" {
			e.Err = fmt.Errorf("%w: %s", e.Err, message)
		}
		return refusedToken, e
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		excerpt, message := readErrorBody(resp)
		why = fine
		if rq.monitor && resp.StatusCode >= 300 && resp.StatusCode < 400 {
			why = foreignAnswer // the API never redirects; an SSO proxy sends its login page
		}
		return why, statusError(rq, resp, excerpt, message, token != "")
	}

	b, err := openBody(resp, c.cfg.MaxBodyBytes)
	foreign := false
	if err == nil {
		defer b.release() // the buffers go back to their pools once decoded
		// A body that cannot start a JSON value is no answer of the API's:
		// the decoder refuses it at its first byte, before a listing
		// handler has seen any event, so a retry cannot double anything.
		foreign = rq.monitor && !b.startsLikeJSON()
		err = decode(b)
	}
	if err == nil {
		return fine, nil
	}
	excerpt := ""
	if b != nil && rq.endpoint != EndpointLogin { // a login answer may hold a token
		excerpt = b.excerpt()
	}
	var (
		he  *handlerError
		msg *messageBody
	)
	switch {
	case errors.As(err, &he):
		return fine, he.err
	case errors.As(err, &msg):
		kind := KindMalformed
		if rq.endpoint == EndpointLogin {
			kind = KindBadCredentials
		}
		return refusedToken, &Error{Kind: kind, Endpoint: rq.endpoint, Node: rq.nodeLabel(), Status: resp.StatusCode,
			Excerpt: msg.message, Err: msg}
	case ctx.Err() != nil || (isContextError(err) && !isDecodeError(err)):
		return fine, c.transportError(ctx, rq, err, true)
	}
	why = fine
	if foreign {
		why = foreignAnswer
	}
	return why, malformed(rq, resp.StatusCode, excerpt, err)
}

// isDecodeError tells errors about the body's content from read failures.
func isDecodeError(err error) bool {
	var (
		se *syntaxError
		tl *bodyTooLargeError
		ge *gzipError
	)
	return errors.As(err, &se) || errors.As(err, &tl) || errors.As(err, &ge)
}

func (c *Client) setHeaders(h http.Header, rq *request, token string) {
	h.Set("Accept", "application/json")
	if !c.noGzip {
		// Every call, a count's too (a few bytes): the field notes require
		// it of a client. Set explicitly so that no transport decompresses
		// behind our back (the size limit must see the decompressed bytes).
		h.Set("Accept-Encoding", "gzip")
	}
	h.Set("User-Agent", c.cfg.UserAgent)
	if rq.body != nil {
		h.Set("Content-Type", "application/json")
	}
	if token != "" {
		h.Set("Authorization", token)
	}
	if rq.monitor {
		port := rq.node.Port
		if port == 0 {
			port = DefaultNodePort
		}
		h.Set("Monitor-Target-Host", rq.node.Host)
		h.Set("Monitor-Target-Port", portText(port))
	}
}

// defaultPortText is DefaultNodePort as a header value: most nodes use it,
// and formatting it at each call allocated.
var defaultPortText = strconv.Itoa(DefaultNodePort)

func portText(port int) string {
	if port == DefaultNodePort {
		return defaultPortText
	}
	return strconv.Itoa(port)
}
