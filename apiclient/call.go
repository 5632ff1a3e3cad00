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
// login, one attempt, and when the console refuses the token, one fresh
// login and one retry.
func (c *Client) monitorCall(ctx context.Context, rq *request, decode decodeFunc) error {
	if rq.node.Host == "" {
		return &Error{Kind: KindRefused, Endpoint: rq.endpoint, Node: rq.nodeLabel(),
			Err: errors.New("the node has no host name")}
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	token, gen, err := c.auth.current(ctx)
	if err != nil {
		return err
	}
	refusal, err := c.attempt(ctx, rq, token, decode)
	if refusal == nil {
		return err
	}
	if c.cfg.Username == "" {
		refusal.Err = fmt.Errorf("%w (no username is configured: does this console require a login?)", refusal.Err)
		return refusal
	}
	level.Warn(c.logger).Log("msg", "console refused the token, logging in again", "endpoint", rq.endpoint,
		"node", rq.nodeLabel(), "status", refusal.Status)
	if token, _, err = c.auth.renew(ctx, gen); err != nil {
		return err
	}
	refusal, err = c.attempt(ctx, rq, token, decode)
	if refusal != nil {
		refusal.Err = fmt.Errorf("%w (even right after a new login)", refusal.Err)
		return refusal
	}
	return err
}

// attempt sends one request and decodes its answer. A call refused as
// unauthenticated (401/403, or a 2xx {"message"} body) is returned as
// refusal, for the caller to decide on a retry; any other failure is err.
func (c *Client) attempt(ctx context.Context, rq *request, token string, decode decodeFunc) (refusal *Error, err error) {
	var sent atomic.Bool
	trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { sent.Store(true) }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), rq.method,
		c.cfg.URL+rq.path, bytes.NewReader(rq.body))
	if err != nil {
		return nil, &Error{Kind: KindRefused, Endpoint: rq.endpoint, Node: rq.nodeLabel(),
			Err: fmt.Errorf("cannot build the request: %w", err)}
	}
	if rq.body == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	c.setHeaders(req, rq, token)

	start := time.Now()
	code := "error"
	defer func() {
		d := time.Since(start)
		if c.cfg.Observer != nil {
			c.cfg.Observer.ObserveRequest(rq.endpoint, code, d)
		}
		logErr := err
		if refusal != nil {
			logErr = refusal
		}
		level.Debug(c.logger).Log("msg", "console request", "endpoint", rq.endpoint, "node", rq.nodeLabel(),
			"code", code, "duration", d, "err", logErr)
	}()

	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, rq, err, sent.Load())
	}
	defer drain(resp)
	code = strconv.Itoa(resp.StatusCode)
	if !acquireBodySlot(ctx) {
		return nil, c.transportError(ctx, rq, ctx.Err(), true)
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
		return e, nil
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		excerpt, message := readErrorBody(resp)
		return nil, statusError(rq, resp, excerpt, message)
	}

	b, err := openBody(resp, c.cfg.MaxBodyBytes)
	if err == nil {
		err = decode(b)
		defer b.release() // the buffers go back to their pools once decoded
	}
	if err == nil {
		return nil, nil
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
		return nil, he.err
	case errors.As(err, &msg):
		kind := KindMalformed
		if rq.endpoint == EndpointLogin {
			kind = KindBadCredentials
		}
		return &Error{Kind: kind, Endpoint: rq.endpoint, Node: rq.nodeLabel(), Status: resp.StatusCode,
			Excerpt: msg.message, Err: msg}, nil
	case ctx.Err() != nil || (isContextError(err) && !isDecodeError(err)):
		return nil, c.transportError(ctx, rq, err, true)
	}
	return nil, malformed(rq, resp.StatusCode, excerpt, err)
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

func (c *Client) setHeaders(req *http.Request, rq *request, token string) {
	h := req.Header
	h.Set("Accept", "application/json")
	if !c.noGzip {
		// Set explicitly so that Go's transport does not decompress behind
		// our back (the size limit must see the decompressed bytes).
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
		h.Set("Monitor-Target-Port", strconv.Itoa(port))
	}
}
