package config

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// FuzzLoadConfig: whatever the file holds, Parse never panics; it either
// refuses with one-line problems or returns a configuration that keeps the
// promises the rest of the exporter relies on.
func FuzzLoadConfig(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.yml")
	seeds = append(seeds, "../indexima.example.yml")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	for _, s := range []string{
		"", "---", "console:", "nodes: [{}]", "clusters: {a: {}}", "clusters: {a: {console: {url: 'http://x:1'}, nodes: [{host: h}]}}",
		"console: {url: 'http://x'}\nnodes: [{host: h, port: 65536}]", "console: {timeout: 1h}\nnodes: [{host: '::1'}]",
		"console: &a {url: 'http://x'}\nnodes: [{host: *a}]", "console: {url: 'http://[::1]:8082'}\nnodes: [{host: h}]\n---\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, yml string) {
		t.Setenv(PasswordEnv, "")
		cfg, err := Parse([]byte(yml), "testdata")
		if err != nil {
			e, ok := err.(*Error)
			if !ok || len(e.Problems) == 0 {
				t.Fatalf("error %v (%T) is not an *Error with problems", err, err)
			}
			for _, l := range e.Lines() {
				if strings.ContainsAny(l, "\r\n") {
					t.Fatalf("problem spans several lines: %q", l)
				}
			}
			return
		}
		if len(cfg.Clusters) == 0 {
			t.Fatal("a configuration without cluster")
		}
		for _, c := range cfg.Clusters {
			if c.Console.URL == "" || c.Console.Timeout <= 0 || len(c.Nodes) == 0 {
				t.Fatalf("incomplete cluster %+v", c)
			}
			names := map[string]bool{}
			for _, n := range c.Nodes {
				if n.Host == "" || n.Port < 1 || n.Port > 65535 || n.Name == "" || names[n.Name] {
					t.Fatalf("bad node %+v in %+v", n, c)
				}
				names[n.Name] = true
				_ = net.JoinHostPort(n.Host, strconv.Itoa(n.Port))
			}
		}
		_ = cfg.String()
	})
}
