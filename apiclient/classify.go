package apiclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
)

// isContextError reports a cancellation or deadline, ours or the caller's.
func isContextError(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// transportError classifies a failure to get an answer (no status, or the
// body could not be read to its end for want of time). sent tells whether
// the console had accepted the whole request: a monitor call that times out
// after that is waiting for the node.
func (c *Client) transportError(ctx context.Context, rq *request, err error, sent bool) *Error {
	e := &Error{Endpoint: rq.endpoint, Node: rq.nodeLabel(), Kind: KindConsoleUnreachable}
	timedOut := isContextError(err) || ctx.Err() != nil
	var limit *headLimitError
	switch {
	case errors.As(err, &limit):
		e.Kind = KindMalformed
		e.Err = limit
	case errors.Is(err, syscall.ECONNREFUSED):
		e.Err = fmt.Errorf("connection refused by the console (is the URL right and the console up?): %w", err)
	case timedOut && rq.monitor && sent:
		e.Kind = KindNodeUnreachable
		e.Err = c.timeoutCause(ctx, "the console accepted the call but the node did not answer", err)
	case timedOut:
		e.Err = c.timeoutCause(ctx, "no answer from the console", err)
	default:
		e.Err = fmt.Errorf("cannot talk to the console: %w", err)
	}
	return e
}

// timeoutCause words a timeout or cancellation and keeps the context error
// in the chain, so that errors.Is(err, context.Canceled) holds for a caller
// that cancelled.
func (c *Client) timeoutCause(ctx context.Context, what string, err error) error {
	cerr := ctx.Err()
	switch {
	case errors.Is(cerr, context.Canceled):
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("%s: call cancelled: %w", what, err)
		}
		return fmt.Errorf("%s: call cancelled: %w (%v)", what, cerr, err)
	case cerr != nil && !errors.Is(err, cerr):
		return fmt.Errorf("%s within the time allowed (timeout %s): %w (%v)", what, c.cfg.Timeout, cerr, err)
	}
	return fmt.Errorf("%s within the time allowed (timeout %s): %w", what, c.cfg.Timeout, err)
}

// statusError classifies a non-2xx answer other than an authentication
// refusal. withToken tells that the call carried a token, so the login with
// the configured URL had worked.
func statusError(rq *request, resp *http.Response, excerpt, message string, withToken bool) *Error {
	e := &Error{Endpoint: rq.endpoint, Node: rq.nodeLabel(), Status: resp.StatusCode, Excerpt: excerpt}
	code := resp.StatusCode
	switch {
	case code >= 500 && rq.monitor:
		e.Kind = KindNodeUnreachable
		e.Err = fmt.Errorf("the console could not get an answer from the node")
	case code >= 500:
		e.Kind = KindConsoleUnreachable
		e.Err = fmt.Errorf("the console failed to handle the login")
	case code >= 300 && code < 400 && withToken:
		// The login went through, so the URL is right: what redirects a
		// call is rather a proxy sending it to its own login page.
		e.Kind = KindRefused
		e.Err = fmt.Errorf("the console redirects the call to %q (a single-sign-on proxy's login page?); redirects are not followed",
			location(resp))
	case code >= 300 && code < 400:
		e.Kind = KindRefused
		e.Err = fmt.Errorf("the console redirects to %q; configure that URL instead (redirects are not followed)",
			location(resp))
	case code == http.StatusNotFound && rq.monitor:
		e.Kind = KindRefused
		e.Err = fmt.Errorf("not found: unknown node or table, or a console release without this endpoint")
	default:
		e.Kind = KindRefused
		e.Err = fmt.Errorf("the console refused the call")
	}
	if message != "" {
		e.Err = fmt.Errorf("%w: %s", e.Err, message)
	}
	return e
}

// location is a redirect's target, safe to show.
func location(resp *http.Response) string {
	return truncate(sanitize([]byte(redactURL(resp.Header.Get("Location"))), 120), 120)
}

// malformed builds a KindMalformed error for a 2xx answer.
func malformed(rq *request, status int, excerpt string, err error) *Error {
	return &Error{Kind: KindMalformed, Endpoint: rq.endpoint, Node: rq.nodeLabel(), Status: status,
		Excerpt: excerpt, Err: err}
}
