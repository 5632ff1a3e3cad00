package faults

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// /metrics behind TLS and basic auth through --web.config.file (the
// exporter-toolkit file): the right user gets the metrics over TLS, a wrong
// password or none gets 401, plain HTTP gets no metrics.
func TestWebConfigTLSAndBasicAuth(t *testing.T) {
	r := newRig(t, rigOpts{sim: simulator.Config{Seed: 17, Rate: 1}, noStart: true})
	ca := newTestCA(t, r.dir, "web")
	_, certPath, keyPath := ca.issue(t, r.dir, "exporter", "127.0.0.1", "localhost")
	const promUser, promPass = "prometheus", "scrape-secret-41"
	hash, err := bcrypt.GenerateFromPassword([]byte(promPass), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	webCfg := filepath.Join(r.dir, "web.yml")
	r.writeFile(webCfg, fmt.Sprintf("tls_server_config:\n  cert_file: %s\n  key_file: %s\nbasic_auth_users:\n  %s: %s\n",
		certPath, keyPath, promUser, hash))
	p := startExporter(t, startOpts{
		args: []string{"--config.file=" + r.cfgPath, "--web.config.file=" + webCfg},
		tls:  &tls.Config{RootCAs: ca.Pool}, user: promUser, pass: promPass,
	})
	code, body, err := p.get("/metrics", promUser, promPass)
	if err != nil || code != http.StatusOK || !strings.Contains(body, "indexima_up") {
		t.Fatalf("scrape with the right credentials over TLS: %d %v", code, err)
	}
	for name, creds := range map[string][2]string{
		"wrong password": {promUser, "nope"},
		"unknown user":   {"mallory", promPass},
		"no credentials": {"", ""},
	} {
		code, body, err := p.get("/metrics", creds[0], creds[1])
		if err != nil || code != http.StatusUnauthorized {
			t.Errorf("%s: %d %v, want 401", name, code, err)
		}
		if strings.Contains(body, "indexima_") {
			t.Errorf("%s: metrics served without authentication", name)
		}
	}
	// Plain HTTP on the TLS port: no metrics.
	resp, err := http.Get("http://" + p.addr + "/metrics")
	if err == nil {
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("plain HTTP scrape answered 200 on a TLS listener")
		}
	}
	// A client that does not trust the exporter's CA refuses it.
	untrusting := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: newTestCA(t, r.dir, "other").Pool}}}
	if resp, err := untrusting.Get(p.url("/metrics")); err == nil {
		resp.Body.Close()
		t.Errorf("TLS handshake succeeded with an unrelated CA")
	}
}

// TLS to the console verifies certificates by default: an unknown CA and a
// certificate for another host are refused (the node is down, the error
// says why); the right ca_file, or server_name matching the certificate, or
// insecure_skip_verify, work.
func TestConsoleTLSVerification(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t, dir, "console")
	good, _, _ := ca.issue(t, dir, "console-good", "127.0.0.1", "localhost")
	wrongHost, _, _ := ca.issue(t, dir, "console-wronghost", "console.example")
	cases := []struct {
		name    string
		cert    tls.Certificate
		yaml    string
		wantUp  bool
		wantLog string
	}{
		{"unknown CA", good, "", false, "certificate"},
		{"right ca_file", good, "tls_config:\n  ca_file: " + ca.File, true, ""},
		{"wrong host", wrongHost, "tls_config:\n  ca_file: " + ca.File, false, "certificate"},
		{"server_name matches", wrongHost, "tls_config:\n  ca_file: " + ca.File + "\n  server_name: console.example", true, ""},
		{"insecure_skip_verify", good, "tls_config:\n  insecure_skip_verify: true", true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cert := c.cert
			r := newRig(t, rigOpts{sim: simulator.Config{Seed: 18, Rate: 1}, consoleTLS: &cert, consoleYAML: c.yaml})
			if !strings.HasPrefix(r.url, "https://") {
				t.Fatalf("console URL %s is not https", r.url)
			}
			s := r.scrape()
			for _, n := range r.nodes {
				up, _ := s.value("indexima_up", node(n))
				if (up == 1) != c.wantUp {
					t.Errorf("node %s up = %v, want up %v", n, up, c.wantUp)
				}
			}
			if c.wantUp {
				r.run(3, 30*time.Second)
				r.check(r.settle())
				return
			}
			if v, _ := s.value("indexima_console_up", nil); v != 0 {
				t.Errorf("console_up = %v with a refused certificate", v)
			}
			testkit.WaitFor(t, "the TLS failure to be logged", func() bool {
				return strings.Contains(strings.ToLower(r.exp.stderr.String()), c.wantLog)
			})
		})
	}
}
