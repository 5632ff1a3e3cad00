package apiclient

import (
	"errors"
	"fmt"
)

// Kind tells callers apart the failures they handle differently.
type Kind int

const (
	// KindBadCredentials: the console refused the name and password (or a
	// login backoff is in force after such a refusal).
	KindBadCredentials Kind = iota + 1
	// KindConsoleUnreachable: no answer from the console itself (dial error,
	// TLS failure, timeout or 5xx on login).
	KindConsoleUnreachable
	// KindNodeUnreachable: the console answered, but the node did not (5xx,
	// timeout while waiting for the node's answer).
	KindNodeUnreachable
	// KindMalformed: an answer that is not what the endpoint returns (bad
	// JSON, wrong shape, bad gzip, body over the size limit, HTML page).
	KindMalformed
	// KindRefused: any other 4xx (missing or unknown node, bad request).
	KindRefused
)

func (k Kind) String() string {
	switch k {
	case KindBadCredentials:
		return "bad credentials"
	case KindConsoleUnreachable:
		return "console unreachable"
	case KindNodeUnreachable:
		return "node unreachable"
	case KindMalformed:
		return "malformed answer"
	case KindRefused:
		return "request refused"
	}
	return "unknown error"
}

// Error is the error type of every call. It never holds a secret.
type Error struct {
	Kind     Kind
	Endpoint string // one of the Endpoint* constants
	Node     string // host:port, empty for login
	Status   int    // HTTP status, 0 when none was received
	Excerpt  string // short, sanitised excerpt of the body
	Err      error  // underlying cause, may be nil
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s: endpoint %s", e.Kind, e.Endpoint)
	if e.Node != "" {
		s += " node " + e.Node
	}
	if e.Status != 0 {
		s += fmt.Sprintf(" status %d", e.Status)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.Excerpt != "" {
		// As received: sanitize made it one line of valid UTF-8 already.
		// Quoting it again would double every quote and backslash of a
		// JSON body, in logs and on /status alike.
		s += " (body: " + e.Excerpt + ")"
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// IsBodyTooLarge tells an answer refused because its body grew past
// Config.MaxBodyBytes (after decompression). A caller can then ask for the
// same data in smaller pieces, e.g. event ranges with a limit.
func IsBodyTooLarge(err error) bool {
	var tl *bodyTooLargeError
	return errors.As(err, &tl)
}
