package faults

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// tokenTap records the tokens the console hands out and receives.
type tokenTap struct {
	mu     sync.Mutex
	tokens map[string]bool
}

func (tt *tokenTap) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a := r.Header.Get("Authorization"); a != "" {
			tt.mu.Lock()
			tt.tokens[a] = true
			tt.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

// The console password, and the tokens, never show: not in the logs at
// debug level (through logins, failed logins, refusals, reloads that fail
// and succeed), not on the landing page, /metrics, /config, /status (whose
// last polls include the refused logins), /sd, nor in the answers of
// /-/reload.
func TestSecretsNeverShown(t *testing.T) {
	tap := &tokenTap{tokens: map[string]bool{}}
	r := newRig(t, rigOpts{sim: simulator.Config{Seed: 19, Rate: 1, TokenLifetime: 2 * time.Minute},
		args: []string{"--log.level=debug"}, front: tap.wrap})
	var pages []string
	r.scrape()
	r.run(5, time.Minute) // tokens expire: re-logins
	r.sim.SetPassword(user, "now-wrong")
	r.sim.RevokeTokens()
	r.run(3, 30*time.Second) // failed logins
	r.sim.SetPassword(user, password)
	// A reload that fails on the password file, then one that succeeds.
	good := r.configYAML(r.nodes)
	r.writeFile(r.cfgPath, strings.Replace(good, r.pwPath, r.pwPath+".missing", 1))
	_, body := r.exp.reloadHTTP()
	pages = append(pages, body)
	r.writeFile(r.cfgPath, strings.Replace(good, "password_file: "+r.pwPath, "password: '"+strings.ReplaceAll(password, "'", "''")+"'", 1))
	_, body = r.exp.reloadHTTP()
	pages = append(pages, body)
	// A config whose password is inline and whose file is otherwise broken.
	r.writeFile(r.cfgPath, strings.Replace(good, "password_file: "+r.pwPath, "password: '"+password+"'\n  bogus: 1", 1))
	_, body = r.exp.reloadHTTP()
	pages = append(pages, body)
	r.exp.sighup()
	r.writeConfig(r.nodes)
	_, body = r.exp.reloadHTTP()
	pages = append(pages, body)
	r.sim.ClearFaults()
	r.settle()
	for _, path := range []string{"/", "/metrics", "/config", "/-/healthy", "/-/ready", "/status", "/events", "/sd"} {
		code, body, err := r.exp.get(path, "", "")
		if err != nil || code != 200 {
			t.Errorf("GET %s: %d %v", path, code, err)
		}
		pages = append(pages, body)
	}
	r.exp.stop()
	logs := r.exp.stderr.String() + r.exp.stdout.String()
	if !strings.Contains(logs, "level=debug") {
		t.Fatalf("no debug line logged: the check proves nothing")
	}
	tap.mu.Lock()
	tokens := tap.tokens
	tap.mu.Unlock()
	if len(tokens) < 2 {
		t.Fatalf("only %d tokens seen: the re-logins did not happen", len(tokens))
	}
	everything := logs + strings.Join(pages, "\n")
	for _, form := range secretForms(password) {
		if strings.Contains(everything, form) {
			t.Errorf("the console password (as %q) appears in logs or pages", form)
		}
	}
	for tok := range tokens {
		if strings.Contains(everything, tok) {
			t.Errorf("a console token appears in logs or pages")
		}
	}
}

// secretForms is the password as it could be written: raw, JSON-escaped,
// quoted, and its distinctive start (a cut or re-quoted copy).
func secretForms(p string) []string {
	j, _ := json.Marshal(p)
	return []string{p, string(j), strings.Trim(string(j), `"`), p[:6]}
}
