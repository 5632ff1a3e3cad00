package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/go-kit/log/level"
)

// session holds the token and serialises logins.
//
// Each successful login bumps gen. A caller whose call was refused with the
// token of generation g asks renew(g): if gen moved on meanwhile, another
// caller has logged in already and the new token is reused; if a login is in
// flight, the caller waits for it. So any number of callers finding the token
// stale cause exactly one login.
//
// A refused or failed login starts a backoff (doubling up to the maximum)
// during which logins are not attempted and callers get the last login error
// at once: a wrong password does not become a login storm. Such a call is
// reported to the observer as a skipped login, not as a login.
//
// A login reports its own outcome to the observer, once. The callers that
// started or waited for it take its result from the flight, not from the
// session: a login failing before its caller looks again (a refused
// connection fails at once) would leave that caller finding the backoff the
// login set, as if refused by it, and reporting the failure a second time.
type session struct {
	c *Client

	mu       sync.Mutex
	token    string
	gen      uint64        // generation of token; bumped by every successful login
	inflight *flight       // the login in progress, nil when none
	lastErr  *Error        // error of the last failed login
	retryAt  time.Time     // no login before this instant
	backoff  time.Duration // wait after the next failure

	// afterLoginStart, when set (tests only), runs in the caller that
	// started a login, right after starting it, with the login's done channel.
	afterLoginStart func(done <-chan struct{})
}

// flight is one login; its result fields are set before done is closed.
type flight struct {
	done  chan struct{}
	token string
	gen   uint64
	err   *Error
}

// current returns the token to use, logging in first when there is none.
// Without a username it returns "" (authentication disabled).
func (s *session) current(ctx context.Context) (string, uint64, error) {
	if s.c.cfg.Username == "" {
		return "", 0, nil
	}
	s.mu.Lock()
	token, gen := s.token, s.gen
	s.mu.Unlock()
	if token != "" {
		return token, gen, nil
	}
	return s.renew(ctx, gen)
}

// renew returns a token newer than generation stale, logging in only when
// nobody else has done it or is doing it.
func (s *session) renew(ctx context.Context, stale uint64) (string, uint64, error) {
	s.mu.Lock()
	if s.gen != stale && s.token != "" {
		token, gen := s.token, s.gen
		s.mu.Unlock()
		return token, gen, nil
	}
	f := s.inflight
	starts := f == nil
	if starts {
		if now := s.c.now(); now.Before(s.retryAt) {
			// No login for this call: it fails on the backoff. No
			// login was made, so none is reported; the skip is.
			err := s.backoffError(now)
			s.mu.Unlock()
			if o := s.c.cfg.Observer; o != nil {
				o.ObserveLoginSkipped()
			}
			return "", 0, err
		}
		f = &flight{done: make(chan struct{})}
		s.inflight = f
	}
	s.mu.Unlock()
	if starts {
		// The login runs detached from the caller's cancellation, so that a
		// caller giving up does not fail the login the others wait for.
		go s.login(context.WithoutCancel(ctx), f)
		if s.afterLoginStart != nil {
			s.afterLoginStart(f.done)
		}
	}
	select {
	case <-f.done:
	case <-ctx.Done():
		return "", 0, s.waitError(ctx)
	}
	if f.err != nil {
		// The login reported its failure; each caller gets its own copy,
		// which it may annotate.
		e := *f.err
		return "", 0, &e
	}
	return f.token, f.gen, nil
}

// login performs one login, publishes its result in the session and in f,
// then closes f.done.
func (s *session) login(ctx context.Context, f *flight) {
	ctx, cancel := context.WithTimeout(ctx, s.c.cfg.Timeout)
	defer cancel()
	token, err := s.c.doLogin(ctx)

	s.mu.Lock()
	defer func() {
		s.inflight = nil
		s.mu.Unlock()
		close(f.done)
	}()
	if err == nil {
		s.token = token
		s.gen++
		s.lastErr = nil
		s.retryAt = time.Time{}
		s.backoff = s.c.cfg.LoginBackoff
		f.token, f.gen = s.token, s.gen
		return
	}
	f.err = err
	s.token = ""
	s.lastErr = err
	if s.backoff == 0 {
		s.backoff = s.c.cfg.LoginBackoff
	}
	// A refused password may lock the account if retried often: back off up
	// to the full maximum. A console that is merely down or answering badly
	// should be retried sooner, so that recovery is not delayed by minutes.
	ceiling := s.c.cfg.MaxLoginBackoff
	if err.Kind != KindBadCredentials {
		ceiling = min(ceiling, maxTransientLoginBackoff)
	}
	s.backoff = min(s.backoff, ceiling)
	s.retryAt = s.c.now().Add(s.backoff)
	level.Warn(s.c.logger).Log("msg", "login failed, backing off", "retry_in", s.backoff, "err", err)
	s.backoff = min(2*s.backoff, ceiling)
}

// maxTransientLoginBackoff caps the login backoff after failures that are not
// a refusal of the credentials (console unreachable, malformed answer).
const maxTransientLoginBackoff = 30 * time.Second

// backoffError is the last login error, said to be still in force.
func (s *session) backoffError(now time.Time) *Error {
	e := *s.lastErr
	e.Err = fmt.Errorf("%w (no new login attempt for another %s)", s.lastErr.Err, s.retryAt.Sub(now).Round(time.Millisecond))
	return &e
}

func (s *session) waitError(ctx context.Context) *Error {
	return &Error{Kind: KindConsoleUnreachable, Endpoint: EndpointLogin,
		Err: s.c.timeoutCause(ctx, "waiting for the login", ctx.Err())}
}

// doLogin posts the credentials and returns the token.
func (c *Client) doLogin(ctx context.Context) (string, *Error) {
	payload, err := json.Marshal(struct {
		Name     string `json:"name"`
		Password string `json:"password"`
	}{c.cfg.Username, string(c.cfg.Password)})
	if err != nil { // cannot happen for two strings; never include the values
		return "", &Error{Kind: KindRefused, Endpoint: EndpointLogin, Err: errors.New("cannot encode the login request")}
	}
	rq := &request{endpoint: EndpointLogin, method: http.MethodPost, path: "/api/login", body: payload}
	var sess loginSession
	why, callErr := c.attempt(ctx, rq, "", func(b *body) error {
		data, err := b.readAll()
		if err != nil {
			return err
		}
		sess, err = decodeLogin(data)
		return err
	})
	var e *Error
	if callErr != nil && !errors.As(callErr, &e) {
		e = &Error{Kind: KindMalformed, Endpoint: EndpointLogin, Err: callErr}
	}
	if why == refusedToken {
		e.Kind = KindBadCredentials
		e.Err = fmt.Errorf("the console refused the name and password of user %q: %w", c.cfg.Username, e.Err)
	}
	if e != nil {
		if e.Kind == KindBadCredentials {
			c.observeLogin(LoginFailure)
		} else {
			c.observeLogin(LoginError)
		}
		return "", e
	}
	c.observeLogin(LoginSuccess)
	level.Debug(c.logger).Log("msg", "logged in", "user", c.cfg.Username, "created_at", sess.createdAt)
	return sess.token, nil
}

func (c *Client) observeLogin(result string) {
	if c.cfg.Observer != nil {
		c.cfg.Observer.ObserveLogin(result)
	}
}
