package apiclient

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	promconfig "github.com/prometheus/common/config"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// TestSecretsNeverShown formats the client, its config and an error of
// every kind with every usual verb, and reads the logs: neither the password
// nor the token issued by the console may appear.
func TestSecretsNeverShown(t *testing.T) {
	sim, _ := newSim(t, nil)
	rec := recordRequests(t, sim.Handler())
	c := newClient(t, rec.URL, func(c *Config) { c.Timeout = 300 * time.Millisecond })
	ctx := ctxT(t)
	if _, err := c.events(ctx, node1); err != nil {
		t.Fatal(err)
	}
	token := ""
	for _, r := range rec.all() {
		if a := r.header.Get("Authorization"); a != "" {
			token = a
		}
	}
	if len(token) < 8 {
		t.Fatalf("no token seen on the wire (%q)", token)
	}

	var errs []error
	collect := func(err error) {
		t.Helper()
		if err == nil {
			t.Fatal("expected an error")
		}
		errs = append(errs, err)
	}
	sim.SetNodeFault(node1.String(), simulator.Fault{Status: 502})
	_, err := c.events(ctx, node1)
	collect(err)
	sim.SetNodeFault(node1.String(), simulator.Fault{Hang: true})
	_, err = c.events(ctx, node1)
	collect(err)
	sim.SetNodeFault(node1.String(), simulator.Fault{Body: simulator.BodyMessage})
	_, err = c.events(ctx, node1)
	collect(err)
	sim.ClearFaults()
	_, err = c.Columns(ctx, node1, "missing")
	collect(err)
	bad := newClient(t, rec.URL, func(c *Config) { c.Password = promconfig.Secret(testPassword + "x") })
	_, err = bad.events(ctx, node1)
	collect(err)
	down := newClient(t, refusingURL(t), nil)
	_, err = down.events(ctx, node1)
	collect(err)
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = c.events(canceled, node1)
	collect(err)

	kinds := map[Kind]bool{}
	for _, err := range errs {
		kinds[kindOf(err)] = true
	}
	for _, k := range []Kind{KindBadCredentials, KindConsoleUnreachable, KindNodeUnreachable, KindMalformed, KindRefused} {
		if !kinds[k] {
			t.Fatalf("no error of kind %s was checked", k)
		}
	}

	withKey := c.cfg
	withKey.TLS.Key = promconfig.Secret(testPassword)
	values := []any{c.Client, *c.Client, c.cfg, &c.cfg, struct{ Inner Config }{c.cfg}, bad.Client, withKey}
	for _, err := range errs {
		values = append(values, err)
	}
	for _, v := range values {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%d", "%q", "%x"} {
			out := fmt.Sprintf(verb, v)
			if strings.Contains(out, testPassword) || strings.Contains(out, token) {
				t.Fatalf("%s of %T shows a secret: %s", verb, v, out)
			}
		}
	}
	for _, logs := range []string{c.logs.String(), bad.logs.String(), down.logs.String()} {
		if logs == "" || strings.Contains(logs, testPassword) || strings.Contains(logs, token) {
			t.Fatalf("logs empty or showing a secret:\n%s", logs)
		}
	}
}

func TestConfigChecks(t *testing.T) {
	for _, cfg := range []Config{
		{},
		{URL: "ftp://console:8082"},
		{URL: "http://"},
		{URL: "http://user:" + testPassword + "@console:8082"},
		{URL: "http://console:8082", Password: "x"},
		{URL: "http://console:8082", Timeout: -1},
		{URL: "http://console:8082", TLS: promconfig.TLSConfig{CAFile: "/nonexistent/ca.pem"}},
	} {
		_, err := New(cfg)
		if err == nil {
			t.Errorf("%v accepted", cfg)
			continue
		}
		if strings.Contains(err.Error(), testPassword) {
			t.Errorf("error shows the password: %v", err)
		}
	}
	c, err := New(Config{URL: "https://console.example:8082/"})
	if err != nil {
		t.Fatal(err)
	}
	if c.cfg.Timeout != DefaultTimeout || c.cfg.MaxBodyBytes != DefaultMaxBodyBytes ||
		c.cfg.LoginBackoff != DefaultLoginBackoff || c.cfg.MaxLoginBackoff != DefaultMaxLoginBackoff ||
		c.cfg.URL != "https://console.example:8082" {
		t.Fatalf("defaults: %+v", c.cfg)
	}
}
