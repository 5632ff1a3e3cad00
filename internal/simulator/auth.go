package simulator

import (
	"crypto/rand"
	"sync"
)

// authState holds users and issued tokens. Token times are on the console's
// simulated clock, so expiry is deterministic under a ManualClock.
type authState struct {
	mu       sync.Mutex
	users    map[string]string
	static   map[string]bool
	tokens   map[string]int64 // token -> createdAt (ms)
	disabled bool
}

func (a *authState) init(cfg Config) {
	a.users = map[string]string{}
	for u, p := range cfg.Users {
		a.users[u] = p
	}
	a.disabled = len(cfg.Users) == 0
	a.static = map[string]bool{}
	for _, t := range cfg.StaticTokens {
		a.static[t] = true
	}
	a.tokens = map[string]int64{}
}

const tokenAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

func newToken() string {
	var b [64]byte
	_, _ = rand.Read(b[:])
	for i := range b {
		b[i] = tokenAlphabet[int(b[i])%len(tokenAlphabet)]
	}
	return string(b[:])
}

// login checks credentials and issues a token.
func (s *Simulator) login(name, password string, now int64) (string, bool) {
	a := &s.auth
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.disabled {
		p, ok := a.users[name]
		if !ok || p != password {
			return "", false
		}
	}
	t := newToken()
	a.tokens[t] = now
	return t, true
}

// authorized tells whether a call carrying token may proceed.
func (s *Simulator) authorized(token string, now int64) bool {
	a := &s.auth
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.disabled {
		return true
	}
	if token == "" {
		return false
	}
	if a.static[token] {
		return true
	}
	created, ok := a.tokens[token]
	if !ok {
		return false
	}
	if lt := s.cfg.TokenLifetime.Milliseconds(); lt > 0 && now-created >= lt {
		delete(a.tokens, token)
		return false
	}
	return true
}

func (s *Simulator) revokeTokens() {
	s.auth.mu.Lock()
	s.auth.tokens = map[string]int64{}
	s.auth.mu.Unlock()
}

func (s *Simulator) setPassword(user, password string) {
	s.auth.mu.Lock()
	s.auth.users[user] = password
	s.auth.disabled = false
	s.auth.mu.Unlock()
}
