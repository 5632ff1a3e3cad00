package program

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/indexima-exporter/indexima_exporter/config"
	"github.com/indexima-exporter/indexima_exporter/poller"
)

// applied records what the reloader hands to the exporter.
type applied struct{ calls [][]poller.Cluster }

func (a *applied) apply(c []poller.Cluster) { a.calls = append(a.calls, c) }

func newTestReloader(t *testing.T, path string, logs *strings.Builder) (*reloader, *applied, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	a := &applied{}
	logger := log.NewLogfmtLogger(logs)
	b := clientBuilder{logger: log.NewNopLogger()}
	r := newReloader(reg, logger, func() (*config.Config, error) { return config.Load(path) }, b.fileBuilder(path), a.apply)
	return r, a, reg
}

func nodeNames(cs []poller.Cluster) []string {
	var out []string
	for _, c := range cs {
		for _, n := range c.Nodes {
			out = append(out, c.Name+"/"+n.Name)
		}
	}
	return out
}

func TestReloadAppliesAGoodFileAndRefusesABadOne(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "indexima.yml")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var logs strings.Builder
	r, a, reg := newTestReloader(t, path, &logs)
	if r.Config() != nil {
		t.Fatal("a configuration before the first load")
	}

	write("console: {url: 'http://127.0.0.1:1'}\nnodes: [{host: a, name: one}, {host: b, name: two}]\n")
	if err := r.load(); err != nil {
		t.Fatal(err)
	}
	if got := nodeNames(a.calls[0]); strings.Join(got, ",") != "/one,/two" {
		t.Fatalf("first load applied %v", got)
	}
	if v := gauge(t, reg, "indexima_exporter_config_last_reload_successful"); v != 1 {
		t.Errorf("last_reload_successful = %v after a good load", v)
	}

	// A good new file: a node removed, one added, in the cluster form.
	write("clusters:\n  prod: {console: {url: 'http://127.0.0.1:1'}, nodes: [{host: b, name: two}, {host: c, name: three}]}\n")
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	if len(a.calls) != 2 || strings.Join(nodeNames(a.calls[1]), ",") != "prod/two,prod/three" {
		t.Fatalf("reload applied %v", nodeNames(a.calls[len(a.calls)-1]))
	}
	if !strings.Contains(logs.String(), `msg="configuration reloaded" clusters=1 nodes=2`) {
		t.Errorf("no log line for the reload:\n%s", logs.String())
	}

	// Bad files of every stage: YAML, validation, client construction.
	writeCA := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(writeCA, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := r.Config()
	for _, bad := range []struct{ yml, want string }{
		{"console: {url: 'http://127.0.0.1:1'}\nnodes: [{host: a}]\nfoo: 1\n", `line 3: unknown key "foo"`},
		{"console: {url: 'http://127.0.0.1:1'}\nnodes: []\n", "nodes: no node configured"},
		{"console: {url: 'https://127.0.0.1:1', tls_config: {ca_file: ca.pem}}\nnodes: [{host: a}]\n", "console: apiclient: TLS configuration"},
	} {
		write(bad.yml)
		logs.Reset()
		err := r.Reload()
		if err == nil || !strings.Contains(err.Error(), bad.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("reload of %q: error %v, want one naming the file and %q", bad.yml, err, bad.want)
		}
		if len(a.calls) != 2 {
			t.Fatalf("a refused file was applied: %v", nodeNames(a.calls[len(a.calls)-1]))
		}
		if r.Config() != before {
			t.Error("the configuration in force changed after a refused reload")
		}
		if v := gauge(t, reg, "indexima_exporter_config_last_reload_successful"); v != 0 {
			t.Errorf("last_reload_successful = %v after a refused reload", v)
		}
		if lines := strings.Split(strings.TrimSpace(logs.String()), "\n"); len(lines) != 1 || !strings.Contains(lines[0], strings.ReplaceAll(bad.want, `"`, `\"`)) {
			t.Errorf("want one log line naming the problem, got:\n%s", logs.String())
		}
	}
}

// gauge reads a gauge without labels from reg.
func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no gauge %s", name)
	return 0
}
