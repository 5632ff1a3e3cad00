package e2e

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// demoPagesEnv turns TestDemoPagesPerIncident on, with how long to watch
// the demo (a Go duration, e.g. 20m): it measures, it does not assert, and
// takes as long as it is told. scripts/measure-demo-pages.sh runs it.
const demoPagesEnv = "INDEXIMA_DEMO_PAGES"

// demoRulesEnv and demoAlertmanagerEnv replace the shipped rule file and
// Alertmanager configuration (paths), to measure another version of them
// (e.g. the ones before a change, from git show) against the same demo.
const (
	demoRulesEnv        = "INDEXIMA_DEMO_RULES"
	demoAlertmanagerEnv = "INDEXIMA_DEMO_ALERTMANAGER"
)

// TestDemoPagesPerIncident measures the pages an operator gets from the
// demo: the real exporter with --demo, scraped every 5s by a real
// Prometheus (3.15, the compose stack's line) evaluating every 15s the
// shipped rules as they ship (no duration scaled), which sends its alerts to a real
// Alertmanager running the shipped alertmanager.yml, whose receivers post
// to this test. The demo runs on the real clock, so its alerts resolve and
// fire again as incidents come and go. It prints the demo's incidents (from
// the exporter's log, each and per kind), what the rules saw of them (from
// the series: report dates, MEMORY_LOW growths, how long each condition
// held), every notification, every alert's firing episodes, and per alert
// name the alerts fired, their episodes and the notifications sent;
// docs/alerts.md gives the numbers of runs.
func TestDemoPagesPerIncident(t *testing.T) {
	watch := os.Getenv(demoPagesEnv)
	if watch == "" {
		t.Skipf("a measurement, not a check: set %s to a duration (e.g. 20m) to run it (scripts/measure-demo-pages.sh)", demoPagesEnv)
	}
	runFor, err := time.ParseDuration(watch)
	if err != nil || runFor <= 0 {
		t.Fatalf("%s=%q: want a duration such as 20m", demoPagesEnv, watch)
	}
	line := testkit.PrometheusLine3()
	promBin := line.Prometheus(t)
	amBin := testkit.Tool(t, "prometheus-alertmanager", "Debian package prometheus-alertmanager")
	dir := t.TempDir()

	hook := newWebhook(t)
	amConfig := cmp.Or(os.Getenv(demoAlertmanagerEnv), filepath.Join("..", "deploy", "prometheus", "alertmanager.yml"))
	am := startAlertmanager(t, amBin, dir, amConfig, hook.url)

	// Prometheus runs first, scraping a front that forwards to the exporter
	// once it is up: the opening's first incidents come 3 and 8 seconds
	// after the exporter starts, and a counter's growth is seen only by a
	// scrape before it (every 5s from the exporter's start on).
	bin := testkit.ExporterBinary(t)
	f := newFront(t)
	rules, err := filepath.Abs(cmp.Or(os.Getenv(demoRulesEnv), filepath.Join("..", "deploy", "prometheus", "rules", "indexima-alerts.yml")))
	if err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`global:
  scrape_interval: 5s
  scrape_timeout: 5s
  evaluation_interval: %s
rule_files: [%q]
alerting:
  alertmanagers:
    - static_configs:
        - targets: [%q]
scrape_configs:
  - job_name: indexima
    static_configs:
      - targets: [%q]
`, demoEvalInterval, rules, am, f.addr)
	cfgFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	proc := startProcess(t, "prometheus", promBin, "--config.file="+cfgFile,
		"--web.listen-address=127.0.0.1:0", "--storage.tsdb.path="+filepath.Join(dir, "tsdb"))
	prom := &prometheusServer{url: "http://" + proc.listening(t, 30*time.Second), proc: proc}
	waitReady(t, proc, prom.url+"/-/ready", 30*time.Second)

	exp := startProcess(t, "indexima_exporter", bin, "--demo", "--web.listen-address=127.0.0.1:0")
	expAddr := exp.listening(t, 30*time.Second)
	waitReady(t, exp, "http://"+expAddr+"/-/ready", 30*time.Second)
	f.setBackend(expAddr)
	start := time.Now()

	// A measurement over the span it was given; every process must live
	// through it.
	t.Logf("watching --demo for %s (rules %s, Alertmanager configuration %s)", runFor, rules, amConfig)
	for end := start.Add(runFor); time.Now().Before(end); time.Sleep(5 * time.Second) {
		for _, p := range []*process{exp, proc} {
			if p.Exited() {
				t.Fatalf("%s exited during the measurement: %v", p.Name, p.Err())
			}
		}
	}

	log := exp.out.String()
	t.Logf("demo incidents (exporter's log, offset from the exporter's start):\n%s", demoIncidents(log, start))
	t.Logf("demo incidents per kind:\n%s", describeCounts(demoIncidentKinds(log)))
	t.Logf("notifications (Alertmanager -> receiver, offset from the exporter's start):\n%s", hook.describe(start))
	t.Logf("NODE_DOWN reports per node reported down (report dates, offset from the exporter's start):\n%s", demoReports(t, prom, start))
	t.Logf("MEMORY_LOW per node (scrapes that saw the counter grow):\n%s", demoGrowths(t, prom, start, "MEMORY_LOW", 10*time.Minute))
	t.Logf("conditions of the rules (ALERTS pending or firing):\n%s", demoConditions(t, prom, start))
	episodes := firingEpisodes(t, prom, start)
	t.Logf("firing episodes in Prometheus (ALERTS, offset from the exporter's start; an alert that resolves and fires again has several):\n%s", describeEpisodes(episodes, start))
	t.Logf("per alert name: alerts fired in Prometheus, their firing episodes, notifications with a firing alert (pages), resolved-only notifications:\n%s", hook.summary(episodes))
}

// startAlertmanager runs Alertmanager with the configuration file config,
// every receiver posting to url/<receiver>, and returns its address.
func startAlertmanager(t *testing.T, bin, dir, config, url string) string {
	t.Helper()
	b, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	receivers, _ := cfg["receivers"].([]any)
	if len(receivers) == 0 {
		t.Fatal("alertmanager.yml has no receivers")
	}
	for _, r := range receivers {
		rm := r.(map[string]any)
		rm["webhook_configs"] = []any{map[string]any{"url": url + "/" + fmt.Sprint(rm["name"])}}
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(cfgFile, out, 0o600); err != nil {
		t.Fatal(err)
	}
	p := startProcess(t, "alertmanager", bin, "--config.file="+cfgFile,
		"--storage.path="+filepath.Join(dir, "am"), "--web.listen-address=127.0.0.1:0",
		"--cluster.listen-address=") // no gossip port
	addr := p.listening(t, 30*time.Second)
	waitReady(t, p, "http://"+addr+"/-/ready", 30*time.Second)
	return addr
}

// webhook receives Alertmanager's notifications.
type webhook struct {
	url string
	mu  sync.Mutex
	got []notification
}

type notification struct {
	at       time.Time
	receiver string
	Status   string            `json:"status"`
	Group    map[string]string `json:"groupLabels"`
	Alerts   []struct {
		Status string            `json:"status"`
		Labels map[string]string `json:"labels"`
	} `json:"alerts"`
}

func newWebhook(t *testing.T) *webhook {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &webhook{url: "http://" + ln.Addr().String()}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		var n notification
		if err == nil {
			err = json.Unmarshal(body, &n)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		n.at, n.receiver = time.Now(), strings.TrimPrefix(r.URL.Path, "/")
		h.mu.Lock()
		h.got = append(h.got, n)
		h.mu.Unlock()
	})}
	// ErrServerClosed once the cleanup closes it; nothing else to say.
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return h
}

// alertKey is an alert's identity without the labels every alert of the
// demo shares.
func alertKey(labels map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		switch k {
		case "alertname", "alertstate", "__name__", "job", "instance", "severity":
			continue
		}
		parts = append(parts, k+"="+labels[k])
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func (h *webhook) describe(start time.Time) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var b strings.Builder
	for _, n := range h.got {
		var firing, resolved []string
		for _, a := range n.Alerts {
			k := a.Labels["alertname"] + alertKey(a.Labels)
			if a.Status == "firing" {
				firing = append(firing, k)
			} else {
				resolved = append(resolved, k)
			}
		}
		fmt.Fprintf(&b, "  %6s %-7s %-8s group %v firing %v resolved %v\n", n.at.Sub(start).Round(time.Second), n.receiver, n.Status, n.Group, firing, resolved)
	}
	return b.String()
}

func (h *webhook) summary(fired map[string]map[string][]episode) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	pages, resolvedOnly := map[string]int{}, map[string]int{}
	names := map[string]bool{}
	for name := range fired {
		names[name] = true
	}
	for _, n := range h.got {
		name := n.Group["alertname"]
		names[name] = true
		firing := false
		for _, a := range n.Alerts {
			firing = firing || a.Status == "firing"
		}
		if firing {
			pages[name]++
		} else {
			resolvedOnly[name]++
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	var b strings.Builder
	for _, name := range sorted {
		keys := slices.Sorted(maps.Keys(fired[name]))
		n := 0
		for _, k := range keys {
			n += len(fired[name][k])
		}
		fmt.Fprintf(&b, "  %-34s fired %d %v, firing episodes %d, pages %d, resolved-only %d\n", name, len(keys), keys, n, pages[name], resolvedOnly[name])
	}
	return b.String()
}

// demoIncidentRE matches the demo's log lines of an incident: the opening's
// ("demo: incident") and the lively scenario's.
var demoIncidentRE = regexp.MustCompile(`(?m)^.*\bts=(\S+).*msg="(?:demo: incident|lively incident)".*$`)

// demoIncidentKindRE takes an incident's kind and its node from its log
// line: the lively scenario's `incident=node-down down=core-4:PORT`,
// `incident=memory-low node=core-1:PORT`, `incident="reload core-1:PORT"`,
// `incident=cluster-stop`; the opening's names its incident in words.
var demoIncidentKindRE = regexp.MustCompile(`incident=(?:"([^"]*)"|(\S+))(?: (?:down|node)=(\S+))?`)

// demoIncidentKinds counts the demo's incidents per kind and node (the
// opening's by their name), from the exporter's log: "node-down core-4",
// "memory-low core-1", "reload core-1", "cluster-stop", "cluster-start",
// "opening: <its name>", "?" for a line it cannot read.
func demoIncidentKinds(log string) map[string]int {
	counts := map[string]int{}
	for _, m := range demoIncidentRE.FindAllString(log, -1) {
		k := demoIncidentKindRE.FindStringSubmatch(m)
		if k == nil {
			counts["?"]++
			continue
		}
		kind := cmp.Or(k[1], k[2])
		if strings.Contains(m, `msg="demo: incident"`) {
			kind = "opening: " + kind
		} else if k[3] != "" {
			kind += " " + strings.Split(k[3], ":")[0]
		} else if name, node, ok := strings.Cut(kind, " "); ok {
			kind = name + " " + strings.Split(node, ":")[0]
		}
		counts[kind]++
	}
	return counts
}

func describeCounts(counts map[string]int) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		fmt.Fprintf(&b, "  %4d %s\n", counts[k], k)
	}
	return b.String()
}

// demoIncidents lists the demo's incidents from the exporter's log, with
// their offset from start.
func demoIncidents(log string, start time.Time) string {
	var b strings.Builder
	for _, m := range demoIncidentRE.FindAllStringSubmatch(log, -1) {
		at, err := time.Parse(time.RFC3339Nano, m[1])
		offset := "?"
		if err == nil {
			offset = at.Sub(start).Round(time.Second).String()
		}
		line := m[0]
		if i := strings.Index(line, "msg="); i >= 0 {
			line = line[i:]
		}
		fmt.Fprintf(&b, "  %6s %s\n", offset, line)
	}
	return b.String()
}
