package simulator

import (
	"crypto/tls"
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/testca"
)

// consoleTLS is a certificate for 127.0.0.1 and a client configuration
// that trusts it and offers protos in ALPN.
func consoleTLS(t *testing.T, offered ...string) (*tls.Config, func(protos ...string) *http.Client) {
	t.Helper()
	dir := t.TempDir()
	ca, err := testca.New(dir, "console")
	if err != nil {
		t.Fatal(err)
	}
	is, err := ca.Issue(dir, "console", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	server := &tls.Config{Certificates: []tls.Certificate{is.Pair}, NextProtos: offered}
	client := func(protos ...string) *http.Client {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool, NextProtos: protos}}
		tr.Protocols = new(http.Protocols)
		for _, p := range protos {
			switch p {
			case "h2":
				tr.Protocols.SetHTTP2(true)
			case "http/1.1":
				tr.Protocols.SetHTTP1(true)
			}
		}
		if len(protos) == 0 {
			tr.Protocols.SetHTTP1(true) // offers nothing in ALPN, then speaks HTTP/1.1
		}
		t.Cleanup(tr.CloseIdleConnections)
		return &http.Client{Transport: tr, Timeout: 30 * time.Second}
	}
	return server, client
}

// Config.TLS: the console speaks the protocols it offers in ALPN and no
// other; offering only h2, it refuses HTTP/1.1 as an HTTP/2-only load
// balancer does.
func TestTLSOffersWhatItSpeaks(t *testing.T) {
	for _, tc := range []struct {
		offered []string
		speaks  map[string]string // what a client offering the key gets: the protocol, or "" for a refusal
	}{
		{nil, map[string]string{"h2": "HTTP/2.0", "http/1.1": "HTTP/1.1", "": "HTTP/1.1"}},
		{[]string{"h2", "http/1.1"}, map[string]string{"h2": "HTTP/2.0", "http/1.1": "HTTP/1.1", "": "HTTP/1.1"}},
		{[]string{"h2"}, map[string]string{"h2": "HTTP/2.0", "http/1.1": "", "": ""}},
		{[]string{"http/1.1"}, map[string]string{"h2": "", "http/1.1": "HTTP/1.1", "": "HTTP/1.1"}},
	} {
		name := strings.Join(tc.offered, ",")
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			server, client := consoleTLS(t, tc.offered...)
			s, _ := newTestSim(t, Config{TLS: server})
			if !strings.HasPrefix(s.URL(), "https://127.0.0.1:") {
				t.Fatalf("URL %s", s.URL())
			}
			answered := map[string]int{}
			for offer, want := range tc.speaks {
				var protos []string
				if offer != "" {
					protos = []string{offer}
				}
				resp, err := client(protos...).Post(s.URL()+"/api/login", "application/json",
					strings.NewReader(`{"name":"`+testUser+`","password":"`+testPass+`"}`))
				if want == "" {
					if err == nil {
						resp.Body.Close()
						t.Errorf("a client offering %q was answered %s", protos, resp.Proto)
					} else if offer != "" && !strings.Contains(err.Error(), "tls: no application protocol") {
						t.Errorf("a client offering %q: %v, want the handshake refused (tls: no application protocol)", protos, err)
					}
					continue
				}
				if err != nil {
					t.Errorf("a client offering %q: %v", protos, err)
					continue
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.Proto != want || resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"id"`) {
					t.Errorf("a client offering %q: %s %d %.80s, want %s 200 and a session", protos, resp.Proto, resp.StatusCode, body, want)
				}
				answered[resp.Proto]++
			}
			if st := s.Stats(); !maps.Equal(st.Protocols, answered) || st.Connections != len(tc.speaks) {
				t.Errorf("stats: calls by protocol %v, %d connections; want %v, %d", st.Protocols, st.Connections, answered, len(tc.speaks))
			}
		})
	}
}

// The console Down fault closes and reopens the TLS listener alike.
func TestTLSDownAndBack(t *testing.T) {
	server, client := consoleTLS(t, "h2")
	s, _ := newTestSim(t, Config{TLS: server})
	c := client("h2")
	s.SetConsoleFault(Fault{Down: true})
	if resp, err := c.Get(s.URL() + "/api/get/version"); err == nil {
		resp.Body.Close()
		t.Fatal("answered while down")
	}
	s.SetConsoleFault(Fault{})
	resp, err := c.Get(s.URL() + "/api/get/version")
	if err != nil {
		t.Fatalf("after the console came back: %v", err)
	}
	resp.Body.Close()
	if resp.Proto != "HTTP/2.0" {
		t.Errorf("%s after the console came back, want HTTP/2.0", resp.Proto)
	}
}
