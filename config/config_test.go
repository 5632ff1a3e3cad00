package config

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// write puts content in dir/name and returns the path.
func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// loadString writes yml to a fresh directory and loads it.
func loadString(t *testing.T, yml string) (*Config, error) {
	t.Helper()
	return Load(write(t, t.TempDir(), "indexima.yml", yml))
}

func mustLoad(t *testing.T, yml string) *Config {
	t.Helper()
	cfg, err := loadString(t, yml)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return cfg
}

func TestSingleFormWithDefaults(t *testing.T) {
	cfg := mustLoad(t, `
console:
  url: http://console.example:8082
nodes:
  - host: core-a
  - host: core-b
    port: 9000
    name: b
`)
	if len(cfg.Clusters) != 1 {
		t.Fatalf("clusters = %d, want 1", len(cfg.Clusters))
	}
	c := cfg.Clusters[0]
	if c.Name != "" {
		t.Errorf("single form cluster name = %q, want empty (no cluster label)", c.Name)
	}
	if c.Console.URL != "http://console.example:8082" || c.Console.Username != "" || c.Console.Password != "" {
		t.Errorf("console = %+v", c.Console)
	}
	if c.Console.Timeout != 10*time.Second {
		t.Errorf("default timeout = %v, want 10s", c.Console.Timeout)
	}
	want := []Node{{Host: "core-a", Port: 9999, Name: "core-a:9999"}, {Host: "core-b", Port: 9000, Name: "b"}}
	if len(c.Nodes) != 2 || c.Nodes[0] != want[0] || c.Nodes[1] != want[1] {
		t.Errorf("nodes = %+v, want %+v", c.Nodes, want)
	}
	if cfg.NodeCount() != 2 {
		t.Errorf("NodeCount = %d", cfg.NodeCount())
	}
}

func TestClustersForm(t *testing.T) {
	cfg := mustLoad(t, `
clusters:
  staging:
    console: {url: "https://staging:8082", timeout: 3s}
    nodes: [{host: s1}]
  prod:
    console: {url: "https://prod:8082", username: mon, password: pw}
    nodes: [{host: p1}, {host: p2, name: two}]
`)
	if len(cfg.Clusters) != 2 {
		t.Fatalf("clusters = %d, want 2", len(cfg.Clusters))
	}
	prod, staging := cfg.Clusters[0], cfg.Clusters[1]
	if prod.Name != "prod" || staging.Name != "staging" {
		t.Fatalf("cluster names %q %q, want prod staging (sorted)", prod.Name, staging.Name)
	}
	if len(prod.Nodes) != 2 || prod.Nodes[1].Name != "two" || prod.Console.Username != "mon" {
		t.Errorf("prod = %+v", prod)
	}
	if staging.Console.Timeout != 3*time.Second || staging.Nodes[0].Name != "s1:9999" {
		t.Errorf("staging = %+v", staging)
	}
}

func TestSameNodeNameInTwoClustersIsFine(t *testing.T) {
	mustLoad(t, `
clusters:
  a: {console: {url: "http://a:1"}, nodes: [{host: h, name: core-1}]}
  b: {console: {url: "http://b:1"}, nodes: [{host: h, name: core-1}]}
`)
}

// A node number is optional and unique within its cluster only: NODE_DOWN
// comments name a node of the reporter's own cluster.
func TestNodeNumbers(t *testing.T) {
	cfg := mustLoad(t, `
clusters:
  a:
    console: {url: "http://a:1"}
    nodes: [{host: h1, number: 0}, {host: h2, number: 7}, {host: h3}]
  b:
    console: {url: "http://b:1"}
    nodes: [{host: h1, number: 7}]
`)
	a, b := cfg.Clusters[0], cfg.Clusters[1]
	number := func(n Node) string {
		if n.Number == nil {
			return "none"
		}
		return fmt.Sprint(*n.Number)
	}
	if got := []string{number(a.Nodes[0]), number(a.Nodes[1]), number(a.Nodes[2]), number(b.Nodes[0])}; strings.Join(got, ",") != "0,7,none,7" {
		t.Errorf("numbers = %v, want [0 7 none 7]", got)
	}
}

func TestUnknownKeyNamesKeyAndLine(t *testing.T) {
	cases := []struct {
		name, yml, want string
	}{
		{"top level", "console: {url: http://c:1}\nnodes: [{host: a}]\nnodez: []\n", `line 3: unknown key "nodez"`},
		{"console", "console:\n  url: http://c:1\n  passwd: x\nnodes: [{host: a}]\n", `line 3: unknown key "passwd" in console`},
		{"node", "console: {url: http://c:1}\nnodes:\n  - host: a\n    prot: 1\n", `line 4: unknown key "prot" in a node`},
		{"tls_config", "console:\n  url: https://c:1\n  tls_config:\n    ca_fil: x\nnodes: [{host: a}]\n", `line 4: unknown key "ca_fil" in tls_config`},
		{"cluster", "clusters:\n  p:\n    console: {url: http://c:1}\n    nodes: [{host: a}]\n    extra: 1\n", `line 5: unknown key "extra" in a cluster`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadString(t, tc.yml)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestValidationErrorsNameTheField(t *testing.T) {
	const nodes = "nodes: [{host: a}]\n"
	cases := []struct {
		name, yml string
		want      []string
	}{
		{"no url", "console: {username: u, password: p}\n" + nodes, []string{"console.url: missing"}},
		{"bad scheme", "console: {url: ftp://c:1}\n" + nodes, []string{`console.url: "ftp://c:1": scheme "ftp" not supported`}},
		{"no host", "console: {url: 'http://:8082'}\n" + nodes, []string{"console.url", "no host"}},
		{"not a url", "console: {url: 'http://c:1/%zz'}\n" + nodes, []string{"console.url: not a valid URL"}},
		{"bare host", "console: {url: console.example}\n" + nodes, []string{"console.url", "scheme"}},
		{"query", "console: {url: 'http://c:1/?a=b'}\n" + nodes, []string{"console.url", "query"}},
		{"no nodes", "console: {url: http://c:1}\n", []string{"nodes: no node configured"}},
		{"empty nodes", "console: {url: http://c:1}\nnodes: []\n", []string{"nodes: no node configured"}},
		{"no console", nodes, []string{"console: missing"}},
		{"nothing", "nodes:\n", []string{"console: missing", "nodes: no node configured"}},
		{"duplicate names", "console: {url: http://c:1}\nnodes: [{host: a, name: x}, {host: b, name: y}, {host: c, name: x}]\n",
			[]string{`nodes[2].name: duplicate node name "x" (also nodes[0])`}},
		{"duplicate address", "console: {url: http://c:1}\nnodes: [{host: a}, {host: a, port: 9999, name: other}]\n",
			[]string{"nodes[1]: node a:9999 is listed twice (also nodes[0])"}},
		{"port zero", "console: {url: http://c:1}\nnodes: [{host: a, port: 0}]\n", []string{"nodes[0].port: 0 is out of range 1-65535"}},
		{"port high", "console: {url: http://c:1}\nnodes: [{host: a, port: 70000}]\n", []string{"nodes[0].port: 70000 is out of range"}},
		{"port text", "console: {url: http://c:1}\nnodes: [{host: a, port: abc}]\n", []string{"line 2", "abc"}},
		{"host with port", "console: {url: http://c:1}\nnodes: [{host: 'a:9999'}]\n", []string{"nodes[0].host", "port:"}},
		{"host missing", "console: {url: http://c:1}\nnodes: [{name: x}]\n", []string{"nodes[0].host: missing"}},
		{"timeout zero", "console: {url: http://c:1, timeout: 0s}\n" + nodes, []string{"console.timeout: must be greater than 0"}},
		{"timeout negative", "console: {url: http://c:1, timeout: -1s}\n" + nodes, []string{"console.timeout: must be greater than 0"}},
		{"timeout bare number", "console: {url: http://c:1, timeout: 10}\n" + nodes, []string{"line 1", "duration"}},
		{"both forms", "console: {url: http://c:1}\n" + nodes + "clusters: {p: {console: {url: http://c:1}, nodes: [{host: a}]}}\n",
			[]string{"clusters: give either console and nodes at the top level"}},
		{"empty clusters", "clusters: {}\n", []string{"clusters: empty"}},
		{"null cluster", "clusters: {p: }\n", []string{"clusters.p: empty"}},
		{"bad cluster name", "clusters: {'a b': {console: {url: http://c:1}, nodes: [{host: a}]}}\n", []string{`clusters.a b: cluster name "a b"`}},
		{"cluster field path", "clusters: {p: {console: {url: http://c:1}, nodes: [{host: a, port: -1}]}}\n", []string{"clusters.p.nodes[0].port"}},
		{"both passwords", "console: {url: http://c:1, username: u, password: p, password_file: f}\n" + nodes,
			[]string{"console.password: give password or password_file, not both"}},
		{"password without user", "console: {url: http://c:1, password: p}\n" + nodes, []string{"console.username: missing, but a password is configured"}},
		{"missing password file", "console: {url: http://c:1, username: u, password_file: nope}\n" + nodes,
			[]string{"console.password_file:", "nope", "no such file"}},
		{"password file is a directory", "console: {url: http://c:1, username: u, password_file: .}\n" + nodes,
			[]string{"console.password_file:", "not a regular file"}},
		{"duplicate key", "console: {url: http://c:1}\nconsole: {url: http://c:2}\n" + nodes, []string{"line 2", "already defined"}},
		{"syntax", "console: {url: http://c:1\n" + nodes, []string{"line"}},
		{"wrong type", "console: [1]\n" + nodes, []string{"line 1", "cannot unmarshal"}},
		{"second document", "console: {url: http://c:1}\n" + nodes + "---\nfoo: 1\n", []string{"line 3: a second YAML document"}},
		{"duplicate number", "console: {url: http://c:1}\nnodes:\n  - {host: a, number: 4}\n  - {host: b}\n  - {host: c,\n     number: 4}\n",
			[]string{"nodes[2].number: line 6: duplicate node number 4 (also nodes[0], line 3)"}},
		{"cluster field path of a number", "clusters: {p: {console: {url: http://c:1}, nodes: [{host: a, number: 1}, {host: b, number: 1}]}}\n",
			[]string{"clusters.p.nodes[1].number: line 1: duplicate node number 1 (also clusters.p.nodes[0], line 1)"}},
		{"negative number", "console: {url: http://c:1}\nnodes: [{host: a, number: -1}]\n", []string{"nodes[0].number: line 2: -1 is negative"}},
		{"number text", "console: {url: http://c:1}\nnodes: [{host: a, number: four}]\n", []string{`line 2: node number "four" is not a whole number`}},
		{"number float", "console: {url: http://c:1}\nnodes: [{host: a, number: 1.5}]\n", []string{"line 2", "1.5"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(PasswordEnv, "")
			_, err := loadString(t, tc.yml)
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans several lines: %q", msg)
			}
			if !strings.HasPrefix(msg, "config file ") {
				t.Errorf("error %q does not name the file", msg)
			}
		})
	}
}

func TestEveryProblemIsReported(t *testing.T) {
	_, err := loadString(t, "console: {url: ftp://c}\nnodes: [{host: a, port: 0}, {host: b, name: 'a:0'}]\n")
	e, ok := err.(*Error)
	if !ok {
		t.Fatalf("error %v (%T), want *Error", err, err)
	}
	// Scheme, port, and the name "a:0" that node 1 takes from node 0's default.
	if len(e.Lines()) != 3 {
		t.Fatalf("lines = %q, want 3", e.Lines())
	}
	for _, l := range e.Lines() {
		if !strings.HasPrefix(l, "config file ") {
			t.Errorf("line %q does not name the file", l)
		}
	}
}

func TestFileErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(filepath.Join(dir, "missing.yml")); err == nil || !strings.Contains(err.Error(), "file not found") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Load(write(t, dir, "empty.yml", "")); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty file: %v", err)
	}
	if _, err := Load(dir); err == nil {
		t.Error("a directory loaded as a config file")
	}
}

func TestPasswordSources(t *testing.T) {
	const head = "console:\n  url: http://c:1\n  username: mon\n"
	const tail = "nodes: [{host: a}]\n"
	t.Run("inline", func(t *testing.T) {
		t.Setenv(PasswordEnv, "from-env")
		c := mustLoad(t, head+"  password: inline\n"+tail).Clusters[0].Console
		if c.Password != "inline" || c.PasswordSource != "password" {
			t.Errorf("password %q from %q, want the inline one over the env", c.Password, c.PasswordSource)
		}
	})
	t.Run("file relative to the config, trimmed", func(t *testing.T) {
		t.Setenv(PasswordEnv, "from-env")
		dir := t.TempDir()
		write(t, dir, "pw", "from-file\n")
		cfg, err := Load(write(t, dir, "c.yml", head+"  password_file: pw\n"+tail))
		if err != nil {
			t.Fatal(err)
		}
		c := cfg.Clusters[0].Console
		if c.Password != "from-file" || !strings.HasPrefix(c.PasswordSource, "password_file") {
			t.Errorf("password %q from %q, want the file's over the env", c.Password, c.PasswordSource)
		}
		if c.PasswordFile != filepath.Join(dir, "pw") {
			t.Errorf("PasswordFile = %q, want it resolved against the config's directory", c.PasswordFile)
		}
	})
	t.Run("env", func(t *testing.T) {
		t.Setenv(PasswordEnv, "from-env")
		c := mustLoad(t, head+tail).Clusters[0].Console
		if c.Password != "from-env" || c.PasswordSource != "env "+PasswordEnv {
			t.Errorf("password %q from %q", c.Password, c.PasswordSource)
		}
	})
	t.Run("none", func(t *testing.T) {
		t.Setenv(PasswordEnv, "")
		_, err := loadString(t, head+tail)
		if err == nil || !strings.Contains(err.Error(), `console.username: "mon" has no password`) {
			t.Errorf("error = %v", err)
		}
	})
	t.Run("no username, no authentication", func(t *testing.T) {
		t.Setenv(PasswordEnv, "from-env")
		c := mustLoad(t, "console: {url: http://c:1}\n"+tail).Clusters[0].Console
		if c.Password != "" || c.Username != "" {
			t.Errorf("console = %+v, want no credentials", c)
		}
	})
	t.Run("empty file", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, "pw", "\n")
		_, err := Load(write(t, dir, "c.yml", head+"  password_file: pw\n"+tail))
		if err == nil || !strings.Contains(err.Error(), "the file is empty") {
			t.Errorf("error = %v", err)
		}
	})
}

func TestPasswordFileIsReadAtEveryLoad(t *testing.T) {
	dir := t.TempDir()
	pw := write(t, dir, "pw", "first")
	path := write(t, dir, "c.yml", "console: {url: http://c:1, username: u, password_file: pw}\nnodes: [{host: a}]\n")
	for _, want := range []string{"first", "second"} {
		if err := os.WriteFile(pw, []byte(want), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(cfg.Clusters[0].Console.Password); got != want {
			t.Errorf("password = %q, want %q", got, want)
		}
	}
}

func TestSecretsNeverShown(t *testing.T) {
	const secret = "s3cr3t-VALUE"
	dir := t.TempDir()
	write(t, dir, "pw", secret)
	cfg, err := Load(write(t, dir, "ok.yml", "clusters:\n  a: {console: {url: http://c:1, username: u, password: "+secret+
		"}, nodes: [{host: a}]}\n  b: {console: {url: http://c:1, username: u, password_file: pw}, nodes: [{host: a}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.String(); strings.Contains(s, secret) || !strings.Contains(s, "<secret>") {
		t.Errorf("String() shows the secret or hides nothing:\n%s", s)
	}
	bad := []string{
		"console: {url: 'http://u:" + secret + "@c:1'}\nnodes: [{host: a}]\n",
		"console: {url: 'ftp://u:" + secret + "@c:1'}\nnodes: [{host: a}]\n",
		"console: {url: 'http://u:" + secret + "@c:1/%zz'}\nnodes: [{host: a}]\n",
		"console: {url: http://c:1, password: " + secret + ", password_file: pw}\nnodes: [{host: a}]\n",
		"console: {url: http://c:1, password: " + secret + "}\nnodes: [{host: a}]\n",
		"console: {url: http://c:1, username: u, password: " + secret + ", timeout: 0s}\nnodes: []\n",
	}
	for _, yml := range bad {
		_, err := Load(write(t, dir, "bad.yml", yml))
		if err == nil {
			t.Errorf("%q loaded, want an error", yml)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error shows the secret: %v", err)
		}
	}
}

func TestTLSConfig(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "ca.pem", "x")
	write(t, dir, "cert.pem", "x")
	write(t, dir, "key.pem", "x")
	cfg, err := Load(write(t, dir, "c.yml", `
console:
  url: https://c:8082
  tls_config:
    ca_file: ca.pem
    cert_file: cert.pem
    key_file: key.pem
    server_name: console.example
    insecure_skip_verify: true
    min_version: TLS12
nodes: [{host: a}]
`))
	if err != nil {
		t.Fatal(err)
	}
	tc := cfg.Clusters[0].Console.TLSConfig
	if tc.CAFile != filepath.Join(dir, "ca.pem") || tc.CertFile != filepath.Join(dir, "cert.pem") || tc.KeyFile != filepath.Join(dir, "key.pem") {
		t.Errorf("files not resolved against the config's directory: %+v", tc)
	}
	if tc.ServerName != "console.example" || !tc.InsecureSkipVerify || tc.MinVersion != tls.VersionTLS12 {
		t.Errorf("tls = %+v", tc)
	}

	cases := []struct{ name, tls, want string }{
		{"missing ca", "{ca_file: nope.pem}", "console.tls_config.ca_file:"},
		{"cert without key", "{cert_file: cert.pem}", "console.tls_config: give cert_file and key_file together"},
		{"key without cert", "{key_file: key.pem}", "console.tls_config: give cert_file and key_file together"},
		{"refs", "{ca_ref: x}", `line 3: unknown key "ca_ref" in tls_config`},
		{"inline ca", "{ca: x}", `line 3: unknown key "ca" in tls_config`},
		{"bad version", "{min_version: TLS99}", `console.tls_config.min_version: "TLS99" is not a TLS version`},
		{"min above max", "{min_version: TLS13, max_version: TLS12}", "console.tls_config: min_version TLS13 is above max_version TLS12"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(write(t, dir, "bad.yml", "console:\n  url: https://c:1\n  tls_config: "+tc.tls+"\nnodes: [{host: a}]\n"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestExampleFileLoads(t *testing.T) {
	data, err := os.ReadFile("../indexima.example.yml")
	if err != nil {
		t.Fatal(err)
	}
	// The example names files of a real install; give it local ones.
	dir := t.TempDir()
	write(t, dir, "password", "pw\n")
	write(t, dir, "console-ca.pem", "x")
	yml := strings.ReplaceAll(string(data), "/etc/indexima_exporter/", "")
	cfg, err := Parse([]byte(yml), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Clusters) != 1 || len(cfg.Clusters[0].Nodes) != 3 || cfg.Clusters[0].Console.Password != "pw" {
		t.Errorf("example = %s", cfg)
	}
}

// /config prints the configuration in force in the file's own form: saved
// to a file, it loads again to the same configuration (the password as
// <secret> where the file held one, the file named where it came from one).
func TestPrintedConfigLoadsAgain(t *testing.T) {
	for _, name := range []string{"single.yml", "clusters.yml"} {
		t.Run(name, func(t *testing.T) {
			abs, err := filepath.Abs(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			want, err := Load(abs)
			if err != nil {
				t.Fatal(err)
			}
			printed := want.String()
			if strings.Contains(printed, "password_source") || strings.Contains(printed, "password: secret\n") {
				t.Errorf("printed:\n%s", printed)
			}
			path := filepath.Join(t.TempDir(), "printed.yml")
			if err := os.WriteFile(path, []byte(printed), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := Load(path)
			if err != nil {
				t.Fatalf("the printed configuration does not load: %v\n%s", err, printed)
			}
			for i := range want.Clusters {
				if want.Clusters[i].Console.PasswordSource == "password" {
					// The file held the password itself: printed hidden.
					want.Clusters[i].Console.Password = "<secret>"
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("loaded again:\n%+v\nwant\n%+v\nprinted:\n%s", got, want, printed)
			}
			if again := got.String(); again != printed {
				t.Errorf("printed twice differently:\n%s\n---\n%s", printed, again)
			}
		})
	}
}

// A password from the environment has no key in the file: /config says so
// in a comment, and the print loads again (taking it from there once more).
func TestPrintedConfigPasswordFromTheEnvironment(t *testing.T) {
	t.Setenv(PasswordEnv, "from-env-Pa55")
	cfg, err := Parse([]byte("console: {url: \"http://c:8082\", username: m}\nnodes: [{host: n1}]\n"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	printed := cfg.String()
	if !strings.HasPrefix(printed, "# the console: password from the environment ("+PasswordEnv+")\n") || strings.Contains(printed, "from-env-Pa55") {
		t.Fatalf("printed:\n%s", printed)
	}
	again, err := Parse([]byte(printed), t.TempDir())
	if err != nil || again.Clusters[0].Console.Password != "from-env-Pa55" {
		t.Fatalf("loaded again: %v %+v", err, again)
	}
}

// A console URL written without its scheme, the likeliest slip, gets the
// URL with http:// as a hint (its password masked); a URL with a scheme, or
// one that http:// does not repair, gets none.
func TestConsoleURLWithoutSchemeGetsAHint(t *testing.T) {
	cases := []struct{ url, want string }{
		{"127.0.0.1:18082", "console.url: not a valid URL; did you mean http://127.0.0.1:18082?"},
		{"[::1]:18082", "console.url: not a valid URL; did you mean http://[::1]:18082?"},
		{"console.example:8082", "console.url: no scheme; did you mean http://console.example:8082?"},
		{"console.example", "console.url: no scheme; did you mean http://console.example?"},
		{"console.example:8082/indexima", "console.url: no scheme; did you mean http://console.example:8082/indexima?"},
		{"monitor:Pa55@console.example:8082", "console.url: no scheme; did you mean http://monitor:xxxxx@console.example:8082?"},
		{"ftp://c:1", `console.url: "ftp://c:1": scheme "ftp" not supported (use http:// or https://)`},
		{"http://c:1/%zz", "console.url: not a valid URL"},
		{"c:1/%zz", `console.url: scheme "c" not supported (use http:// or https://)`},
		{"monitor:Pa55@c:1/%zz", `console.url: scheme "monitor" not supported (use http:// or https://)`},
	}
	for _, tc := range cases {
		t.Run(tc.url, func(t *testing.T) {
			_, err := loadString(t, fmt.Sprintf("console: {url: %q}\nnodes: [{host: a}]\n", tc.url))
			var e *Error
			if !errors.As(err, &e) || len(e.Problems) != 1 {
				t.Fatalf("got %v, want one problem", err)
			}
			if e.Problems[0] != tc.want {
				t.Errorf("\n got %s\nwant %s", e.Problems[0], tc.want)
			}
			if strings.Contains(e.Problems[0], "Pa55") {
				t.Errorf("the password is in %q", e.Problems[0])
			}
		})
	}
}
