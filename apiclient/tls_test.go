package apiclient

import (
	"encoding/pem"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// TestTLS: certificates are verified by default; a CA file or
// insecure_skip_verify makes the simulator's self-signed console usable.
func TestTLS(t *testing.T) {
	sim, _ := newSim(t, nil)
	srv := httptest.NewTLSServer(sim.Handler())
	defer srv.Close()
	ctx := ctxT(t)

	c := newClient(t, srv.URL, nil)
	_, err := c.Version(ctx, node1)
	wantError(t, err, KindConsoleUnreachable, EndpointLogin)

	caFile := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(caFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	c = newClient(t, srv.URL, func(c *Config) { c.TLS.CAFile = caFile })
	if _, err := c.Version(ctx, node1); err != nil {
		t.Fatalf("with the CA file: %v", err)
	}
	c = newClient(t, srv.URL, func(c *Config) { c.TLS.InsecureSkipVerify = true })
	if _, err := c.Version(ctx, node1); err != nil {
		t.Fatalf("with insecure_skip_verify: %v", err)
	}
}
