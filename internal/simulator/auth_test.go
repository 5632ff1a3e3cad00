package simulator

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

const versionPath = "/api/monitor/get/version"

func TestLoginAnswersASession(t *testing.T) {
	s, _ := newTestSim(t, Config{})
	a := call(t, s, "/api/login", reqOpts{method: http.MethodPost, body: `{"name":"monitor","password":"s3cret"}`})
	if a.status != http.StatusOK {
		t.Fatalf("status %d: %s", a.status, a.body)
	}
	var sess map[string]any
	if err := json.Unmarshal(a.body, &sess); err != nil {
		t.Fatalf("not JSON: %s", a.body)
	}
	id, _ := sess["id"].(string)
	if !regexp.MustCompile(`^[A-Za-z0-9]{64}$`).MatchString(id) {
		t.Errorf("id %q is not 64 alphanumeric characters", id)
	}
	if sess["userName"] != "monitor" {
		t.Errorf("userName = %v", sess["userName"])
	}
	if _, ok := sess["isAdministrator"].(bool); !ok {
		t.Errorf("isAdministrator missing or not a boolean: %s", a.body)
	}
	if _, ok := sess["localUser"].(bool); !ok {
		t.Errorf("localUser missing or not a boolean: %s", a.body)
	}
	if c, _ := sess["createdAt"].(float64); int64(c) != ms(t0) {
		t.Errorf("createdAt = %v, want the clock's %d", sess["createdAt"], ms(t0))
	}
	if st := s.Stats(); st.Logins != 1 || st.Requests["login"] != 1 {
		t.Errorf("stats after a login: %+v", st)
	}
}

func TestLoginRefused(t *testing.T) {
	for _, status := range []int{0, 403} {
		s, _ := newTestSim(t, Config{RefusalStatus: status})
		want := status
		if want == 0 {
			want = http.StatusUnauthorized
		}
		for _, body := range []string{`{"name":"monitor","password":"wrong"}`, `{"name":"nobody","password":"s3cret"}`} {
			a := call(t, s, "/api/login", reqOpts{method: http.MethodPost, body: body})
			if a.status != want {
				t.Errorf("refusal status %d: login %s answered %d", status, body, a.status)
			}
			var m struct{ Message *string }
			if json.Unmarshal(a.body, &m) != nil || m.Message == nil || *m.Message == "" {
				t.Errorf("refused login body is not {\"message\"}: %s", a.body)
			}
		}
		if st := s.Stats(); st.LoginFailures != 2 || st.Logins != 0 {
			t.Errorf("stats: %+v", st)
		}
	}
}

func TestLoginBadBody(t *testing.T) {
	s, _ := newTestSim(t, Config{})
	a := call(t, s, "/api/login", reqOpts{method: http.MethodPost, body: `name=monitor`})
	if a.status != http.StatusBadRequest || !strings.Contains(string(a.body), `"message"`) {
		t.Errorf("non-JSON login: %d %s", a.status, a.body)
	}
}

// refused checks that a call was refused as unauthenticated.
func refused(t *testing.T, a answer, status int, why string) {
	t.Helper()
	if a.status != status {
		t.Fatalf("%s: status %d, want %d (%s)", why, a.status, status, a.body)
	}
	var m struct{ Message string }
	if err := json.Unmarshal(a.body, &m); err != nil || !strings.HasPrefix(m.Message, "No session attribute found") {
		t.Fatalf("%s: body %s is not the refusal message", why, a.body)
	}
}

func TestCallsNeedAToken(t *testing.T) {
	for _, status := range []int{401, 403, 200} {
		s, _ := newTestSim(t, Config{RefusalStatus: status})
		refused(t, call(t, s, versionPath, reqOpts{node: nodeA}), status, "no token")
		refused(t, call(t, s, versionPath, reqOpts{node: nodeA, token: strings.Repeat("x", 64)}), status, "unknown token")
		// "Bearer <token>" is not the bare token the console expects.
		tok := login(t, s)
		refused(t, call(t, s, versionPath, reqOpts{node: nodeA, token: "Bearer " + tok}), status, "scheme word")
		if a := call(t, s, versionPath, reqOpts{node: nodeA, token: tok}); a.status != 200 {
			t.Fatalf("valid token refused: %d %s", a.status, a.body)
		}
		if st := s.Stats(); st.Refused != 3 {
			t.Errorf("Refused = %d, want 3", st.Refused)
		}
	}
}

func TestTokenExpiresOnTheSimulatedClock(t *testing.T) {
	s, clk := newTestSim(t, Config{TokenLifetime: time.Hour})
	tok := login(t, s)
	clk.Advance(time.Hour - time.Millisecond)
	if a := call(t, s, versionPath, reqOpts{node: nodeA, token: tok}); a.status != 200 {
		t.Fatalf("token refused before its lifetime: %d", a.status)
	}
	clk.Advance(time.Millisecond)
	refused(t, call(t, s, versionPath, reqOpts{node: nodeA, token: tok}), 401, "expired token")
	if a := call(t, s, versionPath, reqOpts{node: nodeA, token: login(t, s)}); a.status != 200 {
		t.Fatalf("fresh token refused: %d", a.status)
	}
}

func TestRevokeAndStaticTokens(t *testing.T) {
	static := strings.Repeat("S", 64)
	s, clk := newTestSim(t, Config{TokenLifetime: time.Minute, StaticTokens: []string{static}})
	tok := login(t, s)
	s.RevokeTokens()
	refused(t, call(t, s, versionPath, reqOpts{node: nodeA, token: tok}), 401, "revoked token")
	clk.Advance(24 * time.Hour)
	if a := call(t, s, versionPath, reqOpts{node: nodeA, token: static}); a.status != 200 {
		t.Fatalf("static token refused after revocation and a day: %d %s", a.status, a.body)
	}
}

func TestSetPassword(t *testing.T) {
	s, _ := newTestSim(t, Config{})
	s.SetPassword(testUser, "new")
	a := call(t, s, "/api/login", reqOpts{method: http.MethodPost, body: `{"name":"monitor","password":"s3cret"}`})
	if a.status != 401 {
		t.Errorf("old password accepted: %d", a.status)
	}
	a = call(t, s, "/api/login", reqOpts{method: http.MethodPost, body: `{"name":"monitor","password":"new"}`})
	if a.status != 200 {
		t.Errorf("new password refused: %d", a.status)
	}
}

func TestAuthDisabled(t *testing.T) {
	s, _ := newTestSim(t, Config{Users: map[string]string{}})
	a := call(t, s, versionPath, reqOpts{node: nodeA})
	if a.status != 200 {
		t.Fatalf("auth disabled, call without token: %d %s", a.status, a.body)
	}
	if s.Stats().Refused != 0 {
		t.Error("a call was counted as refused")
	}
}

func TestNodeHeaders(t *testing.T) {
	s, _ := newTestSim(t, Config{})
	tok := login(t, s)
	cases := []struct {
		name   string
		host   string
		port   string
		status int
	}{
		{"no headers", "", "", 400},
		{"host only", "node-a", "", 400},
		{"port only", "", "9999", 400},
		{"port not a number", "node-a", "ninety", 400},
		{"unknown host", "node-z", "9999", 502},
		{"wrong port", "node-a", "9998", 502},
	}
	for _, c := range cases {
		req, _ := http.NewRequest("GET", s.URL()+"/api/monitor/get/lastevents/0", nil)
		req.Header.Set("Authorization", tok)
		if c.host != "" {
			req.Header.Set("Monitor-Target-Host", c.host)
		}
		if c.port != "" {
			req.Header.Set("Monitor-Target-Port", c.port)
		}
		resp, err := rawClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var m struct{ Message string }
		err = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if resp.StatusCode != c.status || err != nil || m.Message == "" {
			t.Errorf("%s: status %d (want %d), message %q, err %v", c.name, resp.StatusCode, c.status, m.Message, err)
		}
	}
	if st := s.Stats(); st.NodeRequests[nodeA] != 0 {
		t.Errorf("refused node calls counted for node-a: %v", st.NodeRequests)
	}
}
