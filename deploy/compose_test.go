package deploy

import (
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

const composeDir = "deploy/docker-compose"

// composeConfig returns the stack as docker-compose resolves it (relative
// paths made absolute), which also validates the file; no daemon needed.
func composeConfig(t *testing.T) object {
	t.Helper()
	r := mustRun(t, time.Minute, filepath.Join(testkit.RepoRoot(t), composeDir), tool(t, "docker-compose"), "-f", "docker-compose.yml", "config")
	var cfg object
	if err := yaml.Unmarshal([]byte(r.stdout), &cfg); err != nil {
		t.Fatalf("docker-compose config output: %v", err)
	}
	return cfg
}

// binds returns a service's bind mounts as target -> absolute source.
func binds(t *testing.T, svc any) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, v := range asList(dig(svc, "volumes")) {
		var src, dst string
		switch m := v.(type) {
		case string:
			parts := strings.Split(m, ":")
			if len(parts) < 2 {
				continue
			}
			src, dst = parts[0], parts[1]
		case object:
			if m["type"] != "bind" {
				continue
			}
			src, dst = str(m["source"]), str(m["target"])
		}
		if filepath.IsAbs(src) {
			out[dst] = src
		}
	}
	return out
}

func TestComposeStack(t *testing.T) {
	root := testkit.RepoRoot(t)
	cfg := composeConfig(t)
	services, _ := cfg["services"].(object)
	for _, name := range []string{"exporter", "prometheus", "alertmanager", "grafana"} {
		if services[name] == nil {
			t.Fatalf("service %s missing (services: %v)", name, services)
		}
	}

	// Every bind mount exists: a moved file or directory would otherwise
	// show up only as an empty directory in the container.
	for name, svc := range services {
		for dst, src := range binds(t, svc) {
			if _, err := os.Stat(src); err != nil {
				t.Errorf("%s: bind mount %s -> %s: %v", name, src, dst, err)
			}
		}
	}

	// The exporter is built from this repository, in demo mode, on its port.
	exp := services["exporter"]
	if ctx := str(dig(exp, "build", "context")); filepath.Clean(ctx) != root {
		t.Errorf("exporter build context %q, want the repository root %q", ctx, root)
	}
	if _, err := os.Stat(filepath.Join(root, str(dig(exp, "build", "dockerfile")))); err != nil {
		t.Errorf("exporter dockerfile: %v", err)
	}
	if cmd := stringList(dig(exp, "command")); !slices.Contains(cmd, "--demo") {
		t.Errorf("exporter command %v lacks --demo", cmd)
	}
	if ports := strings.Join(stringList(dig(exp, "ports")), " "); !strings.Contains(ports, ":"+strconv.Itoa(exporterPort)) {
		t.Errorf("exporter ports %q do not publish %d", ports, exporterPort)
	}
	// The links it gives out (the alerts' status_url among them) open from
	// the host's browser: its external URL is the port published on the
	// host, not exporter:9897, which only the stack resolves.
	ext, err := url.Parse(flagValue(stringList(dig(exp, "command")), "web.external-url"))
	if err != nil || ext.Hostname() != "localhost" {
		t.Errorf("exporter --web.external-url %v (%v): want http://localhost:<published port>", ext, err)
	} else {
		published := false
		for _, p := range stringList(dig(exp, "ports")) {
			parts := strings.Split(strings.TrimSuffix(p, "/tcp"), ":")
			published = published || len(parts) == 3 && parts[1] == ext.Port() && parts[2] == strconv.Itoa(exporterPort)
		}
		if !published {
			t.Errorf("exporter --web.external-url %s: port %s is not the host's port of the exporter (ports %v)", ext, ext.Port(), stringList(dig(exp, "ports")))
		}
	}

	// Prometheus runs a release of a line the tests prove the rules,
	// dashboards and configuration on.
	image := str(dig(services["prometheus"], "image"))
	_, tag, _ := strings.Cut(image, ":")
	tested := false
	for _, line := range testkit.PrometheusLines {
		tested = tested || strings.HasPrefix(strings.TrimPrefix(tag, "v"), line.Name+".")
	}
	if !tested {
		t.Errorf("prometheus image %q is of no tested Prometheus line (testkit.PrometheusLines)", image)
	}

	// Prometheus loads the shipped rules.
	pb := binds(t, services["prometheus"])
	if got, want := pb["/etc/prometheus/rules"], filepath.Join(root, "deploy", "prometheus", "rules"); got != want {
		t.Errorf("prometheus rules mount from %q, want %q", got, want)
	}
	if pb["/etc/prometheus/prometheus.yml"] == "" {
		t.Error("prometheus.yml is not mounted")
	}

	// Grafana: provisioning at its place, dashboards where the provider looks.
	gb := binds(t, services["grafana"])
	if got, want := gb["/etc/grafana/provisioning"], filepath.Join(root, "dashboards", "provisioning"); got != want {
		t.Errorf("grafana provisioning mount from %q, want %q", got, want)
	}
	providers := readObjects(t, "dashboards/provisioning/dashboards/*.y*ml")
	npaths := 0
	for _, p := range providers {
		for _, prov := range asList(p["providers"]) {
			path := str(dig(prov, "options", "path"))
			npaths++
			src, ok := gb[path]
			if !ok {
				t.Errorf("dashboard provider path %s is not mounted in grafana (mounts %v)", path, gb)
				continue
			}
			if m, _ := filepath.Glob(filepath.Join(src, "*.json")); len(m) == 0 {
				t.Errorf("dashboard provider path %s is mounted from %s, which holds no dashboard", path, src)
			}
		}
	}
	if npaths == 0 {
		t.Error("no dashboard provider in dashboards/provisioning/dashboards")
	}
	for _, d := range readObjects(t, "dashboards/provisioning/datasources/*.y*ml") {
		for _, ds := range asList(d["datasources"]) {
			checkServiceURL(t, services, "grafana data source "+str(dig(ds, "name")), str(dig(ds, "url")))
		}
	}
}

// checkServiceURL fails unless raw (URL or host:port) names a service of the stack.
func checkServiceURL(t *testing.T, services object, what, raw string) {
	t.Helper()
	hostport := raw
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		hostport = u.Host
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		t.Errorf("%s: %q has no host:port", what, raw)
		return
	}
	if services[host] == nil && host != "localhost" {
		t.Errorf("%s: %q names no service of the stack", what, raw)
	}
	if host == "exporter" && port != strconv.Itoa(exporterPort) {
		t.Errorf("%s: %q: the exporter listens on %d", what, raw, exporterPort)
	}
}

// TestComposePrometheusConfig: the stack's prometheus.yml passes promtool
// with the shipped rules beside it (as mounted), and its targets are services.
// On both tested Prometheus lines, and with the Prometheus 3 setting
// convert_classic_histograms_to_nhcb uncommented on 3.x.
func TestComposePrometheusConfig(t *testing.T) {
	root := testkit.RepoRoot(t)
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(root, composeDir, "prometheus.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "prometheus3.yml"), []byte(testkit.UncommentNHCB(t, string(data))), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "deploy", "prometheus", "rules"), filepath.Join(dir, "rules")); err != nil {
		t.Fatal(err)
	}
	for _, line := range testkit.PrometheusLines {
		files := []string{"prometheus.yml"}
		if line.Major >= 3 {
			files = append(files, "prometheus3.yml")
		}
		for _, f := range files {
			r := mustRun(t, time.Minute, dir, line.Promtool(t), "check", "config", f)
			if !strings.Contains(r.stdout+r.stderr, "rules found") {
				t.Errorf("promtool %s loaded no rule file with %s:\n%s", line.Name, f, r)
			}
		}
	}

	services, _ := composeConfig(t)["services"].(object)
	var cfg object
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	targets := 0
	for _, sc := range asList(cfg["scrape_configs"]) {
		for _, st := range asList(dig(sc, "static_configs")) {
			for _, target := range stringList(dig(st, "targets")) {
				checkServiceURL(t, services, "scrape target", target)
				targets++
			}
		}
	}
	// Alerts go to the stack's own Alertmanager and nowhere else: not to
	// localhost, which in Prometheus's container is Prometheus itself.
	alertmanagers := 0
	for _, am := range asList(dig(cfg, "alerting", "alertmanagers")) {
		if len(asList(dig(am, "static_configs"))) == 0 {
			t.Errorf("an alertmanager of prometheus.yml is not a static target of the stack: %v", am)
		}
		for _, st := range asList(dig(am, "static_configs")) {
			for _, target := range stringList(dig(st, "targets")) {
				host, _, _ := net.SplitHostPort(target)
				if img := str(dig(services[host], "image")); !strings.Contains(img, "alertmanager") {
					t.Errorf("prometheus.yml sends alerts to %q, which is no Alertmanager service of the stack (image %q)", target, img)
				}
				checkServiceURL(t, services, "alertmanager", target)
				alertmanagers++
			}
		}
	}
	if len(asList(dig(cfg, "rule_files"))) > 0 && alertmanagers == 0 {
		t.Error("prometheus.yml loads alerting rules but sends the alerts to no Alertmanager")
	}
	if targets == 0 {
		t.Error("prometheus.yml scrapes no target of the stack")
	}
}
