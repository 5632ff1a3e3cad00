package deploy

import (
	"bufio"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/grafana/alloy/syntax/parser"
	"go.yaml.in/yaml/v3"

	"github.com/indexima-exporter/indexima_exporter/dashboards"
	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// mount is one volume of a service as docker-compose config writes it.
type mount struct {
	source, target string
	named          bool // a volume of the stack, not a bind of a host path
	readOnly       bool
}

func mounts(t *testing.T, svc any) []mount {
	t.Helper()
	var out []mount
	for _, v := range asList(dig(svc, "volumes")) {
		switch m := v.(type) {
		case string:
			parts := strings.Split(m, ":")
			if len(parts) < 2 {
				t.Fatalf("volume %q: no target", m)
			}
			mt := mount{source: parts[0], target: parts[1], named: !filepath.IsAbs(parts[0])}
			mt.readOnly = len(parts) > 2 && slices.Contains(strings.Split(parts[2], ","), "ro")
			out = append(out, mt)
		case object:
			ro, _ := m["read_only"].(bool)
			out = append(out, mount{source: str(m["source"]), target: str(m["target"]), named: m["type"] == "volume", readOnly: ro})
		}
	}
	return out
}

// mountOf is the mount of svc that holds the path p in the container.
func mountOf(t *testing.T, svc any, p string) (mount, bool) {
	t.Helper()
	for _, m := range mounts(t, svc) {
		if p == m.target || strings.HasPrefix(p, strings.TrimSuffix(m.target, "/")+"/") {
			return m, true
		}
	}
	return mount{}, false
}

// flagValue is the value of --name=VALUE (or -name=VALUE) in a command.
func flagValue(cmd []string, name string) string {
	for _, a := range cmd {
		for _, prefix := range []string{"--" + name + "=", "-" + name + "="} {
			if v, ok := strings.CutPrefix(a, prefix); ok {
				return v
			}
		}
	}
	return ""
}

// imageUID is the numeric user the Dockerfile's image runs as.
func imageUID(t *testing.T) string {
	t.Helper()
	f, err := os.Open(filepath.Join(testkit.RepoRoot(t), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	uid := ""
	for s := bufio.NewScanner(f); s.Scan(); {
		if rest, ok := strings.CutPrefix(s.Text(), "USER "); ok {
			uid, _, _ = strings.Cut(strings.TrimSpace(rest), ":")
		}
	}
	if _, err := strconv.Atoi(uid); err != nil {
		t.Fatalf("the Dockerfile has no numeric USER (%q)", uid)
	}
	return uid
}

// lokiConfig is the part of Loki's configuration the stack relies on,
// decoded strictly: an unknown or misspelt key of these sections fails.
type lokiConfig struct {
	AuthEnabled *bool `yaml:"auth_enabled"`
	Server      struct {
		HTTPListenPort int    `yaml:"http_listen_port"`
		LogLevel       string `yaml:"log_level"`
	} `yaml:"server"`
	Common struct {
		InstanceAddr string `yaml:"instance_addr"`
		PathPrefix   string `yaml:"path_prefix"`
		Storage      struct {
			Filesystem struct {
				ChunksDirectory string `yaml:"chunks_directory"`
				RulesDirectory  string `yaml:"rules_directory"`
			} `yaml:"filesystem"`
		} `yaml:"storage"`
		ReplicationFactor int `yaml:"replication_factor"`
		Ring              struct {
			KVStore struct {
				Store string `yaml:"store"`
			} `yaml:"kvstore"`
		} `yaml:"ring"`
	} `yaml:"common"`
	SchemaConfig struct {
		Configs []struct {
			From        string `yaml:"from"`
			Store       string `yaml:"store"`
			ObjectStore string `yaml:"object_store"`
			Schema      string `yaml:"schema"`
			Index       struct {
				Prefix string `yaml:"prefix"`
				Period string `yaml:"period"`
			} `yaml:"index"`
		} `yaml:"configs"`
	} `yaml:"schema_config"`
	Analytics struct {
		ReportingEnabled bool `yaml:"reporting_enabled"`
	} `yaml:"analytics"`
}

// TestComposeShipsTheEventLogToLoki checks the wiring that makes the
// Indexima / Events dashboard of the compose stack show the demo's events:
// the exporter writes --events.log into a volume it can write (owned by the
// image's user); Alloy mounts that volume where the shipped
// deploy/logging/events.alloy reads the file, runs that very file, and
// pushes to the stack's Loki on the port Loki's configuration listens on;
// Loki runs its released image with the shipped loki.yml (parsed strictly
// here), its data on a volume; Grafana has a Loki data source at that
// address, which the events dashboard's datasource variable selects.
func TestComposeShipsTheEventLogToLoki(t *testing.T) {
	root := testkit.RepoRoot(t)
	cfg := composeConfig(t)
	services, _ := cfg["services"].(object)
	volumes, _ := cfg["volumes"].(object)

	// The exporter writes the log into a volume of the stack.
	exp := services["exporter"]
	logPath := flagValue(stringList(dig(exp, "command")), "events.log")
	if !path.IsAbs(logPath) {
		t.Fatalf("the exporter's command %v writes no --events.log file", stringList(dig(exp, "command")))
	}
	logMount, ok := mountOf(t, exp, logPath)
	if !ok || !logMount.named || logMount.readOnly {
		t.Fatalf("--events.log=%s is on no writable volume of the stack (mounts %+v)", logPath, mounts(t, exp))
	}
	// A new volume is root's; the exporter's image runs as another user.
	opts, _ := dig(volumes, logMount.source, "driver_opts").(object)
	if uid := imageUID(t); !slices.Contains(strings.Split(str(opts["o"]), ","), "uid="+uid) {
		t.Errorf("volume %s (%v): not owned by uid %s, the exporter image's USER, which could not write its log there", logMount.source, opts, uid)
	}

	// Alloy runs the shipped pipeline and sees the file where it reads it.
	alloy := services["alloy"]
	if img := str(dig(alloy, "image")); !strings.HasPrefix(img, "grafana/alloy:") {
		t.Errorf("alloy image %q, want Grafana Alloy's", img)
	}
	alloyCmd := stringList(dig(alloy, "command"))
	var pipeline string
	for _, m := range mounts(t, alloy) {
		if m.source == filepath.Join(root, "deploy", "logging", "events.alloy") {
			pipeline = m.target
		}
	}
	if pipeline == "" || len(alloyCmd) == 0 || alloyCmd[len(alloyCmd)-1] != pipeline || alloyCmd[0] != "run" {
		t.Fatalf("alloy does not run deploy/logging/events.alloy (command %v, mounted at %q)", alloyCmd, pipeline)
	}
	src, err := os.ReadFile(filepath.Join(root, "deploy", "logging", "events.alloy"))
	if err != nil {
		t.Fatal(err)
	}
	file, err := parser.ParseFile("events.alloy", src)
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]block{}
	for _, b := range alloyBlocks(file.Body) {
		declared[b.name+"."+b.label] = b
	}
	var targets []map[string]string
	attr(t, declared["local.file_match.indexima_events"].body, "path_targets", &targets)
	if len(targets) != 1 {
		t.Fatalf("events.alloy: want one path target, got %v", targets)
	}
	readPath := targets[0]["__path__"]
	rel := strings.TrimPrefix(strings.TrimPrefix(logPath, logMount.target), "/")
	alloyMount, ok := mountOf(t, alloy, readPath)
	if !ok || alloyMount.source != logMount.source || path.Join(alloyMount.target, rel) != readPath {
		t.Errorf("alloy reads %s, but the exporter's %s is %s in volume %s, mounted in alloy as %+v", readPath, logPath, rel, logMount.source, alloyMount)
	}

	// Alloy pushes to the stack's Loki, on Loki's port.
	lokiSvc := services["loki"]
	if img := str(dig(lokiSvc, "image")); !strings.HasPrefix(img, "grafana/loki:") || dig(lokiSvc, "build") != nil {
		t.Errorf("loki: image %q, build %v; want Loki's released image, nothing built (Loki is AGPL-3.0)", img, dig(lokiSvc, "build"))
	}
	var push string
	for _, b := range alloyBlocks(declared["loki.write.default"].body) {
		if b.name == "endpoint" {
			attr(t, b.body, "url", &push)
		}
	}
	lc := checkLokiConfig(t, lokiSvc)
	lokiPort := strconv.Itoa(lc.Server.HTTPListenPort)
	checkLokiURL := func(what, raw string) {
		t.Helper()
		u, err := url.Parse(raw)
		if err != nil || u.Hostname() != "loki" || u.Port() != lokiPort {
			t.Errorf("%s %q: want the stack's loki service on port %s (loki.yml)", what, raw, lokiPort)
		}
	}
	checkLokiURL("events.alloy's loki.write endpoint", push)

	// Grafana: a Loki data source at that address, which the events
	// dashboard's datasource variable (type loki, no uid named) selects.
	lokiSources := 0
	for _, d := range readObjects(t, "dashboards/provisioning/datasources/*.y*ml") {
		for _, ds := range asList(d["datasources"]) {
			if str(dig(ds, "type")) == "loki" {
				lokiSources++
				checkLokiURL("grafana data source "+str(dig(ds, "name")), str(dig(ds, "url")))
			}
		}
	}
	if lokiSources != 1 {
		t.Errorf("%d Loki data sources provisioned, want 1", lokiSources)
	}
	ds, err := dashboards.Load(dashboards.Files)
	if err != nil {
		t.Fatal(err)
	}
	events := 0
	for _, d := range ds {
		if len(d.LogQueries()) > 0 {
			events++
		}
	}
	if events == 0 {
		t.Error("no dashboard reads Loki (a datasource variable of type loki)")
	}
	if !slices.Contains(stringList(dig(services["grafana"], "depends_on")), "loki") && dig(services["grafana"], "depends_on", "loki") == nil {
		t.Error("grafana does not depend on loki")
	}
}

// checkLokiConfig reads the configuration file Loki's command names, from
// its bind mount, strictly; its data directories must lie on a volume.
func checkLokiConfig(t *testing.T, lokiSvc any) lokiConfig {
	t.Helper()
	file := flagValue(stringList(dig(lokiSvc, "command")), "config.file")
	m, ok := mountOf(t, lokiSvc, file)
	if file == "" || !ok || m.named {
		t.Fatalf("loki's -config.file=%q is no file of this repository mounted in it", file)
	}
	data, err := os.ReadFile(m.source)
	if err != nil {
		t.Fatal(err)
	}
	var lc lokiConfig
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&lc); err != nil {
		t.Fatalf("%s: %v", m.source, err)
	}
	if lc.AuthEnabled == nil || *lc.AuthEnabled {
		t.Error("loki.yml: auth_enabled must be false: Alloy pushes without a tenant (X-Scope-OrgID)")
	}
	if lc.Server.HTTPListenPort <= 0 || lc.Server.HTTPListenPort > 65535 {
		t.Errorf("loki.yml: server.http_listen_port %d", lc.Server.HTTPListenPort)
	}
	data2, ok := mountOf(t, lokiSvc, lc.Common.PathPrefix)
	if lc.Common.PathPrefix == "" || !ok || !data2.named || data2.readOnly {
		t.Errorf("loki.yml: common.path_prefix %q is on no writable volume of the stack", lc.Common.PathPrefix)
	}
	fs := lc.Common.Storage.Filesystem
	for _, dir := range []string{fs.ChunksDirectory, fs.RulesDirectory} {
		if !strings.HasPrefix(dir, strings.TrimSuffix(lc.Common.PathPrefix, "/")+"/") {
			t.Errorf("loki.yml: %q is outside common.path_prefix %q", dir, lc.Common.PathPrefix)
		}
	}
	if lc.Common.ReplicationFactor != 1 || lc.Common.Ring.KVStore.Store != "inmemory" {
		t.Errorf("loki.yml: one process needs replication_factor 1 and an inmemory ring, got %d and %q", lc.Common.ReplicationFactor, lc.Common.Ring.KVStore.Store)
	}
	if n := len(lc.SchemaConfig.Configs); n == 0 || lc.SchemaConfig.Configs[n-1].ObjectStore != "filesystem" || lc.SchemaConfig.Configs[n-1].Store != "tsdb" {
		t.Errorf("loki.yml: the latest schema must store a tsdb index on the filesystem: %+v", lc.SchemaConfig.Configs)
	}
	if _, _, err := net.SplitHostPort(lc.Common.InstanceAddr + ":0"); err != nil {
		t.Errorf("loki.yml: common.instance_addr %q", lc.Common.InstanceAddr)
	}
	return lc
}
