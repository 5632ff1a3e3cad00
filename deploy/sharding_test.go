package deploy

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

const shardAddress = "indexima-exporter-shard-${1}.indexima-exporter-shard.monitoring.svc:9897"

// shardedPrometheusConfig returns prometheus.yml of the sharded example.
func shardedPrometheusConfig(t *testing.T) string {
	t.Helper()
	cm := find(t, readObjects(t, "deploy/kubernetes/sharded/prometheus-configmap.yaml"), "ConfigMap", "prometheus-indexima-shards")
	cfg := str(dig(cm, "data", "prometheus.yml"))
	if cfg == "" {
		t.Fatal("prometheus-configmap.yaml has no prometheus.yml")
	}
	return cfg
}

// TestShardedPrometheusConfigChecks: on both tested Prometheus lines, and
// with convert_classic_histograms_to_nhcb uncommented on 3.x.
func TestShardedPrometheusConfigChecks(t *testing.T) {
	dir := t.TempDir()
	cfg := shardedPrometheusConfig(t)
	f, f3 := filepath.Join(dir, "prometheus.yml"), filepath.Join(dir, "prometheus3.yml")
	if err := os.WriteFile(f, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f3, []byte(testkit.UncommentNHCB(t, cfg)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, line := range testkit.PrometheusLines {
		mustRun(t, time.Minute, testkit.RepoRoot(t), line.Promtool(t), "check", "config", f)
		if line.Major >= 3 {
			mustRun(t, time.Minute, testkit.RepoRoot(t), line.Promtool(t), "check", "config", f3)
		}
	}
}

// TestShardedModulusMatchesReplicas: with a modulus above the replica count
// some targets go to a replica that does not exist; below it, one idles.
func TestShardedModulusMatchesReplicas(t *testing.T) {
	sts := find(t, readObjects(t, "deploy/kubernetes/sharded/statefulset.yaml"), "StatefulSet", "indexima-exporter-shard")
	var cfg object
	if err := yaml.Unmarshal([]byte(shardedPrometheusConfig(t)), &cfg); err != nil {
		t.Fatal(err)
	}
	job := probeJob(t, cfg)
	var modulus any
	for _, r := range asList(job["relabel_configs"]) {
		if dig(r, "action") == "hashmod" {
			modulus = dig(r, "modulus")
		}
	}
	if modulus == nil || modulus != dig(sts, "spec", "replicas") {
		t.Fatalf("hashmod modulus %v != StatefulSet replicas %v", modulus, dig(sts, "spec", "replicas"))
	}
}

func probeJob(t *testing.T, cfg object) object {
	t.Helper()
	for _, j := range asList(cfg["scrape_configs"]) {
		if dig(j, "metrics_path") == "/probe" {
			return j.(object)
		}
	}
	t.Fatal("no scrape job with metrics_path /probe")
	return nil
}

// shardSDURL is where the sharded example's Prometheus discovers the nodes:
// the headless Service, which reaches any replica that is up.
const shardSDURL = "http://indexima-exporter-shard.monitoring.svc:9897/sd"

// TestShardedRelabellingSpreadsTargets runs a real Prometheus on the example
// configuration against the real exporter's /sd, the exporter running on the
// example's own configuration, and checks what each replica is asked: /probe
// on its own host name with a node of the configuration as target and its
// cluster as module, every node on exactly one replica, and both replicas
// used. The exporter serves the /sd of the Service's URL; the /probe job is
// sent through an HTTP proxy (proxy_url) that stands in for the two
// replicas.
//
// The proxy reads the replica from the host of each request, the example's
// relabelled address untouched: one loopback listener, port chosen by the
// kernel and held for the whole test. (Giving each replica a loopback port
// of its own needed two ports P0 and P1, the shard number as the last
// digit: found by probing a free port and listening again, a parallel test
// could take them in between.)
func TestShardedRelabellingSpreadsTargets(t *testing.T) {
	prometheus := tool(t, "prometheus")
	text := shardedPrometheusConfig(t)
	if !strings.Contains(text, shardAddress) {
		t.Fatalf("prometheus.yml no longer routes to %s", shardAddress)
	}
	if !strings.Contains(text, shardSDURL) {
		t.Fatalf("prometheus.yml no longer discovers the nodes from %s", shardSDURL)
	}
	svc := find(t, readObjects(t, "deploy/kubernetes/sharded/service.yaml"), "Service", "indexima-exporter-shard")
	if host := fmt.Sprintf("%s.%s.svc:9897", dig(svc, "metadata", "name"), dig(svc, "metadata", "namespace")); !strings.Contains(shardSDURL, "//"+host+"/") {
		t.Fatalf("the /sd URL %s is not on the headless Service %s", shardSDURL, host)
	}
	shards := make([]*probeRecorder, 2)
	replica := map[string]*probeRecorder{} // host:port -> its recorder
	for i := range shards {
		shards[i] = &probeRecorder{seen: map[string]string{}}
		replica[strings.ReplaceAll(shardAddress, "${1}", fmt.Sprint(i))] = shards[i]
	}
	proxy := &replicaProxy{replicas: replica}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 5 * time.Second}
	// ErrServerClosed once the cleanup closes it; nothing else to say.
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { srv.Close() })
	sdAddr, want := shardedExporter(t)
	text = strings.ReplaceAll(text, shardSDURL, "http://"+sdAddr+"/sd")

	var cfg object
	if err := yaml.Unmarshal([]byte(text), &cfg); err != nil {
		t.Fatal(err)
	}
	job := probeJob(t, cfg)
	if _, ok := job["proxy_url"]; ok {
		t.Fatal("the /probe job has a proxy_url: the test's own would replace it")
	}
	job["proxy_url"] = "http://" + l.Addr().String()
	// Scrape and discover at once and often; keep only the /probe job (the
	// other resolves cluster DNS names, which have no meaning here).
	cfg["global"] = object{"scrape_interval": "1s", "scrape_timeout": "1s"}
	cfg["scrape_configs"] = []any{job}
	sds := asList(job["http_sd_configs"])
	if len(sds) != 1 {
		t.Fatalf("the /probe job has %d http_sd_configs, want 1", len(sds))
	}
	sds[0].(object)["refresh_interval"] = "1s"
	if len(want) < 2 {
		t.Fatalf("the example has %d nodes; sharding needs several", len(want))
	}

	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgFile, toYAML(t, cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	startPrometheus(t, prometheus, cfgFile, dir)

	deadline := time.Now().Add(60 * time.Second)
	for {
		got := map[string]int{}
		for _, s := range shards {
			for target := range s.snapshot() {
				got[target]++
			}
		}
		if len(got) == len(want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60s the replicas were asked for %d of %d targets: %v", len(got), len(want), got)
		}
		time.Sleep(100 * time.Millisecond)
	}

	if bad, ok := proxy.badRequest(); ok {
		t.Errorf("a request reached no replica: %s", bad)
	}
	owner := map[string]int{}
	for i, s := range shards {
		seen := s.snapshot()
		if len(seen) == 0 {
			t.Errorf("replica %d was asked for no target: the example does not spread", i)
		}
		if bad, ok := s.badRequest(); ok {
			t.Errorf("replica %d got a request other than /probe?target=&module=: %s", i, bad)
		}
		for target, module := range seen {
			if w, ok := want[target]; !ok || w != module {
				t.Errorf("replica %d asked for target %q module %q; the example has module %q", i, target, module, w)
			}
			if prev, dup := owner[target]; dup {
				t.Errorf("target %s probed by replicas %d and %d: its events would be counted twice", target, prev, i)
			}
			owner[target] = i
		}
	}
}

// shardedExporter runs the exporter binary on the sharded example's own
// configuration (the password files in a temporary directory) with the
// replicas' arguments, on a loopback port, and returns its address and the
// nodes of the configuration: host:port -> cluster.
func shardedExporter(t *testing.T) (string, map[string]string) {
	t.Helper()
	cm := find(t, readObjects(t, "deploy/kubernetes/sharded/configmap.yaml"), "ConfigMap", "indexima-exporter-shard-config")
	text := str(dig(cm, "data", "indexima.yml"))
	dir := t.TempDir()
	var file struct {
		Clusters map[string]struct {
			Console struct {
				PasswordFile string `yaml:"password_file"`
			} `yaml:"console"`
			Nodes []struct {
				Host string `yaml:"host"`
				Port int    `yaml:"port"`
			} `yaml:"nodes"`
		} `yaml:"clusters"`
	}
	if err := yaml.Unmarshal([]byte(text), &file); err != nil {
		t.Fatal(err)
	}
	nodes := map[string]string{}
	for name, c := range file.Clusters {
		pw := filepath.Join(dir, name+".password")
		if err := os.WriteFile(pw, []byte("change-me\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		text = strings.ReplaceAll(text, c.Console.PasswordFile, pw)
		for _, n := range c.Nodes {
			nodes[net.JoinHostPort(n.Host, fmt.Sprint(n.Port))] = name
		}
	}
	cfgFile := filepath.Join(dir, "indexima.yml")
	if err := os.WriteFile(cfgFile, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	// Port 0, read back from the exporter's log: a port found free
	// beforehand could be taken by a parallel test before it binds it.
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, testkit.ExporterBinary(t), "--config.file="+cfgFile, "--web.listen-address=127.0.0.1:0", "--scrape.probe-only")
	var out testkit.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cancel()
		<-exited
	})
	addr, err := testkit.WaitListening(out.String, exited, 30*time.Second)
	if err != nil {
		t.Fatalf("exporter: %v\n%s", err, out.String())
	}
	waitHTTP(t, "http://"+addr+"/-/ready", 30*time.Second, out.String)
	return addr, nodes
}

// replicaProxy is the HTTP proxy Prometheus sends the /probe job through:
// it hands each request to the recorder of the replica its host names.
type replicaProxy struct {
	replicas map[string]*probeRecorder // host:port -> recorder
	mu       sync.Mutex
	bad      string
}

func (p *replicaProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if rec, ok := p.replicas[r.Host]; ok && r.URL.Host == r.Host {
		rec.ServeHTTP(w, r)
		return
	}
	p.mu.Lock()
	p.bad = r.Method + " " + r.URL.String() + " (Host " + r.Host + ")"
	p.mu.Unlock()
	http.Error(w, "no such replica", http.StatusBadGateway)
}

func (p *replicaProxy) badRequest() (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bad, p.bad != ""
}

// probeRecorder stands in for an exporter replica: it records the probes.
type probeRecorder struct {
	mu   sync.Mutex
	seen map[string]string // target -> module
	bad  string
}

func (p *probeRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p.mu.Lock()
	if r.URL.Path != "/probe" || q.Get("target") == "" || q.Get("module") == "" {
		p.bad = r.URL.String()
	} else {
		p.seen[q.Get("target")] = q.Get("module")
	}
	p.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	fmt.Fprintln(w, "indexima_up 1")
}

func (p *probeRecorder) snapshot() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]string, len(p.seen))
	for k, v := range p.seen {
		out[k] = v
	}
	return out
}

func (p *probeRecorder) badRequest() (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bad, p.bad != ""
}

// startPrometheus runs prometheus on loopback until the test ends, and waits
// until it is ready. It binds port 0 and the test reads the port it got from
// its log: a port found free beforehand and handed over could be taken by a
// parallel test before Prometheus binds it.
func startPrometheus(t *testing.T, bin, cfgFile, dir string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin,
		"--config.file="+cfgFile,
		"--web.listen-address=127.0.0.1:0",
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
	)
	logFile, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cancel()
		<-exited
		logFile.Close()
	})
	logs := func() string {
		b, _ := os.ReadFile(logFile.Name())
		return string(b)
	}
	addr, err := testkit.WaitListening(logs, exited, 30*time.Second)
	if err != nil {
		t.Fatalf("prometheus: %v\n%s", err, logs())
	}
	waitHTTP(t, "http://"+addr+"/-/ready", 30*time.Second, logs)
	return addr
}

// waitHTTP polls url until it answers 200 or the deadline passes.
func waitHTTP(t *testing.T, url string, within time.Duration, diag func() string) {
	t.Helper()
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(within)
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after %s (last: %v)\n%s", url, within, err, diag())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestShardedReplicasAreProbeOnlyAndScraped: the replicas run with
// --scrape.probe-only (their /metrics then calls no node), the exporter
// accepts every argument of the manifest, and Prometheus scrapes the
// /metrics of each replica in a job of its own.
func TestShardedReplicasAreProbeOnlyAndScraped(t *testing.T) {
	sts := find(t, readObjects(t, "deploy/kubernetes/sharded/statefulset.yaml"), "StatefulSet", "indexima-exporter-shard")
	containers := asList(dig(sts, "spec", "template", "spec", "containers"))
	if len(containers) != 1 {
		t.Fatalf("%d containers, want the exporter alone", len(containers))
	}
	args := stringList(dig(containers[0], "args"))
	hasFlag := false
	for _, a := range args {
		hasFlag = hasFlag || a == "--scrape.probe-only"
	}
	if !hasFlag {
		t.Fatalf("replica args %v lack --scrape.probe-only: scraping their /metrics would poll every node per replica", args)
	}
	// kingpin refuses an unknown flag before it prints the help.
	cmd := exec.Command(testkit.ExporterBinary(t), append(append([]string(nil), args...), "--help")...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the exporter refuses the replica arguments %v: %v\n%s", args, err, out)
	}

	var cfg object
	if err := yaml.Unmarshal([]byte(shardedPrometheusConfig(t)), &cfg); err != nil {
		t.Fatal(err)
	}
	replicas := dig(sts, "spec", "replicas")
	var targets []string
	for _, j := range asList(cfg["scrape_configs"]) {
		if p := dig(j, "metrics_path"); p != nil && p != "/metrics" {
			continue
		}
		for _, sc := range asList(dig(j, "static_configs")) {
			targets = append(targets, stringList(dig(sc, "targets"))...)
		}
	}
	if fmt.Sprint(len(targets)) != fmt.Sprint(replicas) {
		t.Fatalf("/metrics targets %v: want one per replica (%v)", targets, replicas)
	}
	for i, target := range targets {
		if want := fmt.Sprintf("indexima-exporter-shard-%d.indexima-exporter-shard.", i); !strings.HasPrefix(target, want) {
			t.Errorf("/metrics target %d is %q, want the replica %s...", i, target, want)
		}
	}
}
