package simulator

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSSOProxyAnswers: with SSOProxy set, a call whose token expired, was
// revoked, is unknown or missing gets the proxy's answer instead of the
// console's refusal (gzip or not), is counted as refused, and a fresh login
// still goes through to the console.
func TestSSOProxyAnswers(t *testing.T) {
	for _, mode := range []SSOMode{SSOLoginPage, SSORedirect} {
		t.Run(string(mode), func(t *testing.T) {
			s, clk := newTestSim(t, Config{TokenLifetime: time.Minute, SSOProxy: mode})
			tok := login(t, s)
			if a := call(t, s, versionPath, reqOpts{node: nodeA, token: tok}); a.status != 200 {
				t.Fatalf("valid token: %d %s", a.status, a.body)
			}
			clk.Advance(time.Minute)
			cases := map[string]string{"expired": tok, "missing": "", "unknown": strings.Repeat("X", 64)}
			for what, token := range cases {
				for _, gz := range []bool{false, true} {
					a := callNoRedirect(t, s, versionPath, token, gz)
					if ct := a.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
						t.Errorf("%s token: Content-Type %q", what, ct)
					}
					switch mode {
					case SSOLoginPage:
						if a.status != http.StatusOK || !bytes.Contains(a.body, []byte("<form")) {
							t.Errorf("%s token: %d %q, want 200 and a login form", what, a.status, a.body)
						}
					case SSORedirect:
						if a.status != http.StatusFound || a.header.Get("Location") != "/login" {
							t.Errorf("%s token: %d to %q, want 302 to /login", what, a.status, a.header.Get("Location"))
						}
					}
				}
			}
			if st := s.Stats(); st.Refused != 6 || st.Logins != 1 {
				t.Errorf("stats: %d refused calls, %d logins; want 6 and 1", st.Refused, st.Logins)
			}
			if a := call(t, s, versionPath, reqOpts{node: nodeA, token: login(t, s)}); a.status != 200 {
				t.Fatalf("fresh token: %d %s", a.status, a.body)
			}
			// A wrong password is still the console's own refusal.
			a := call(t, s, "/api/login", reqOpts{method: http.MethodPost, body: `{"name":"monitor","password":"wrong"}`})
			if a.status != http.StatusUnauthorized {
				t.Errorf("wrong password: %d %s", a.status, a.body)
			}
		})
	}
}

// callNoRedirect GETs path on nodeA and returns the answer as sent (a
// redirect is not followed; the body is decompressed).
func callNoRedirect(t *testing.T, s *Simulator, path, token string, gz bool) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URL()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Monitor-Target-Host", "node-a")
	req.Header.Set("Monitor-Target-Port", "9999")
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	if gz {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	c := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	wire, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	a := answer{status: resp.StatusCode, header: resp.Header, body: wire, wire: wire}
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(wire))
		if err != nil {
			t.Fatal(err)
		}
		if a.body, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	return a
}
