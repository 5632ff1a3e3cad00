package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The front forwards to the exporter of the moment and fails requests at
// once while there is none, on the one address it holds throughout.
func TestFront(t *testing.T) {
	f := newFront(t)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	get := func() (string, error) {
		resp, err := client.Get("http://" + f.addr + "/")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	if body, err := get(); err == nil {
		t.Fatalf("no backend, yet an answer: %q", body)
	}
	for _, name := range []string{"first", "second"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, name) }))
		f.setBackend(srv.Listener.Addr().String())
		if body, err := get(); err != nil || body != name {
			t.Fatalf("through the front to the %s backend: %q %v", name, body, err)
		}
		f.setBackend("")
		srv.Close()
		if body, err := get(); err == nil {
			t.Fatalf("backend cleared, yet an answer: %q", body)
		}
	}
}
