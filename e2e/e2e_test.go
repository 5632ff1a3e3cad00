package e2e

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/dashboards"
	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// quietFor is how long, in rule evaluations of 1s, a phase without incident
// is watched for alerts: longer than the scaled windows of the event alerts
// (10s and 20s), so a false increase or a bad first contact shows up.
const quietFor = 20 * time.Second

// externalURL is the exporter's --web.external-url in TestEndToEnd, as the
// docker-compose stack sets it: nothing listens there, the alerts' links
// only name it.
const externalURL = "http://localhost:9897"

// TestEndToEnd runs the exporter binary against the simulator, scraped by a
// real Prometheus with the shipped rules (durations scaled down, see
// timeScale), and drives a scenario through it:
//
//  1. quiet cluster: no alert, not even pending;
//  2. a node reported down by two nodes: one IndeximaNodeDownReported,
//     pending, then firing with down_node the node's configured name (its
//     number in the configuration) and its status_url under the exporter's
//     --web.external-url, then resolved;
//  3. a memory-low episode: IndeximaMemoryLow and IndeximaHyperIndexesUnloaded
//     (one alert for the node, not one per index) pending then firing, and
//     resolved once the indexes are loaded again;
//  4. the console refuses the exporter's credentials:
//     IndeximaConsoleCredentialsRefused and IndeximaConsoleUnreachable fire,
//     the per-node alerts stay quiet, and all resolve with the password back;
//  5. every query of every dashboard returns data;
//  6. the exporter is killed and restarted: no alert fires (the old
//     incidents are neither recounted nor mistaken for new ones);
//  7. a node is reported down while the exporter is down: the restarted
//     exporter counts it (state file) and the alert fires;
//  8. the exporter restarts without its state file and a node reported
//     before is reported again: the alert fires, and nothing else.
//
// It runs once per tested Prometheus line (Debian's 2.42, and 3.15 with its
// left-open range windows and OpenMetrics negotiated first): the same rules
// must give the same alerts on both.
func TestEndToEnd(t *testing.T) {
	for _, line := range testkit.PrometheusLines {
		t.Run("prometheus-"+line.Name, func(t *testing.T) { endToEnd(t, line) })
	}
}

func endToEnd(t *testing.T, line testkit.PrometheusLine) {
	promBin := line.Prometheus(t)
	dir := t.TempDir()
	bin := testkit.ExporterBinary(t)

	sim := simulator.New(simulator.Config{
		Users: map[string]string{consoleUser: consolePassword},
		Nodes: []simulator.NodeConfig{{Host: "node1.test"}, {Host: "node2.test"}, {Host: "node3.test"}},
	})
	if err := sim.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	keys := sim.Nodes()

	exp := newExporter(t, bin, dir, sim)
	// Where a browser reaches the exporter (not where Prometheus scrapes
	// it): the alerts' status_url start with it.
	exp.args = []string{"--web.external-url=" + externalURL}
	exp.start(t)

	rulesDir := filepath.Join(dir, "rules")
	if err := os.Mkdir(rulesDir, 0o700); err != nil {
		t.Fatal(err)
	}
	prom := startPrometheus(t, promBin, dir, scaledRules(t, rulesDir), indeximaJob(exp.addr))
	promStart := time.Now()
	waitQuery(t, prom, `count(indexima_up == 1) == 3`, 30*time.Second)
	dataAt := time.Now()
	// Scraped in the format Prometheus asks first (OpenMetrics on both lines)
	// without a parse error.
	prom.checkScrapesClean(t)

	e := &scenario{prom: prom, exp: exp}

	if !t.Run("quiet cluster fires nothing", func(t *testing.T) {
		prom.waitEvaluatedAfter(t, dataAt.Add(quietFor), quietFor+30*time.Second)
		for _, s := range prom.alertsSince(t, time.Since(promStart)) {
			if !scrapeHiccup(s) {
				t.Errorf("alert on a quiet cluster: %s", describeAlerts([]sample{s}))
			}
		}
	}) {
		return
	}

	incidentsAt := time.Now()
	if !t.Run("NODE_DOWN report", func(t *testing.T) {
		// Two nodes report node2: one alert, naming it as configured.
		sim.ReportNodeDown(keys[0], keys[1])
		sim.ReportNodeDown(keys[2], keys[1])
		want := e.clusterLabels("IndeximaNodeDownReported", "critical", "down_node", "node2")
		a := e.waitAlert(t, want, "firing", 30*time.Second)
		if got, wantSummary := a.Annotations["summary"], "Indexima node node2 is reported down"; got != wantSummary {
			t.Errorf("summary %q, want %q", got, wantSummary)
		}
		if got, wantURL := a.Annotations["status_url"], externalURL+"/status#node-node2"; got != wantURL {
			t.Errorf("status_url %q, want %q", got, wantURL)
		}
		e.checkWasPending(t, want)
		e.waitResolved(t, "IndeximaNodeDownReported", 60*time.Second)
		e.checkOneAlert(t, "IndeximaNodeDownReported", time.Since(incidentsAt))
	}) {
		return
	}

	if !t.Run("memory-low episode", func(t *testing.T) {
		unloaded := sim.Indexes(keys[0])[:2]
		sim.MemoryLowEpisode(keys[0], unloaded...)
		low := e.labels("IndeximaMemoryLow", "warning", "node", "node1", "event", "MEMORY_LOW")
		e.waitAlert(t, low, "firing", 30*time.Second)
		e.checkWasPending(t, low)
		unloadedAlert := e.labels("IndeximaHyperIndexesUnloaded", "warning", "node", "node1")
		a := e.waitAlert(t, unloadedAlert, "firing", 60*time.Second)
		e.checkWasPending(t, unloadedAlert)
		if got, want := a.Annotations["summary"], "2 hyperindex(es) unloaded on Indexima node node1"; got != want {
			t.Errorf("summary %q, want %q", got, want)
		}
		if got, want := a.Annotations["status_url"], externalURL+"/status#node-node1"; got != want {
			t.Errorf("status_url %q, want %q", got, want)
		}
		sim.ReloadIndexes(keys[0], unloaded...)
		e.waitResolved(t, "IndeximaHyperIndexesUnloaded", 30*time.Second)
		e.waitResolved(t, "IndeximaMemoryLow", 60*time.Second)
	}) {
		return
	}

	if !t.Run("console refuses the credentials", func(t *testing.T) {
		// The password changes on the console and every token is revoked:
		// the exporter's next call is refused, its logins fail.
		sim.SetPassword(consoleUser, "changed-by-someone")
		sim.RevokeTokens()
		refused := e.labels("IndeximaConsoleCredentialsRefused", "warning", "result", "failure")
		e.waitAlert(t, refused, "firing", 30*time.Second)
		e.checkWasPending(t, refused)
		e.waitAlert(t, e.clusterLabels("IndeximaConsoleUnreachable", "critical"), "firing", 60*time.Second)
		// The old password is back: the exporter logs in again once its
		// login backoff expires, and both alerts resolve.
		sim.SetPassword(consoleUser, consolePassword)
		e.waitResolved(t, "IndeximaConsoleUnreachable", 90*time.Second)
		e.waitResolved(t, "IndeximaConsoleCredentialsRefused", 60*time.Second)
	}) {
		return
	}

	t.Run("only the expected alerts during the incidents", func(t *testing.T) {
		// IndeximaNodeUnreachable and IndeximaExporterCollectorFailed must
		// stay quiet while the console refuses the exporter: the console
		// alert says it once.
		expected := []string{"IndeximaNodeDownReported", "IndeximaMemoryLow", "IndeximaHyperIndexesUnloaded",
			"IndeximaConsoleCredentialsRefused", "IndeximaConsoleUnreachable"}
		for _, s := range prom.alertsSince(t, time.Since(incidentsAt)) {
			if !slices.Contains(expected, s.Metric["alertname"]) && !scrapeHiccup(s) {
				t.Errorf("unexpected alert during the incidents: %s", describeAlerts([]sample{s}))
			}
		}
	})

	t.Run("every dashboard query returns data", func(t *testing.T) {
		checkDashboards(t, prom)
	})

	if !t.Run("exporter restart fires nothing", func(t *testing.T) {
		restartAt := time.Now()
		e.restartExporter(t, nil)
		prom.waitEvaluatedAfter(t, time.Now().Add(quietFor), quietFor+30*time.Second)
		for _, s := range prom.alertsSince(t, time.Since(restartAt)) {
			// The target was down for a scrape or two.
			if !scrapeHiccup(s) {
				t.Errorf("alert after an exporter restart: %s", describeAlerts([]sample{s}))
			}
		}
	}) {
		return
	}

	if !t.Run("NODE_DOWN during the exporter's downtime fires after its restart", func(t *testing.T) {
		// The restarted exporter resumes from its state file: the report
		// logged while it was down is counted, its counters continuing from
		// the saved ones, and the alert must see it (a new pair here).
		e.restartExporter(t, func() { sim.ReportNodeDown(keys[2], keys[0]) })
		want := e.clusterLabels("IndeximaNodeDownReported", "critical", "down_node", "node1")
		e.waitAlert(t, want, "firing", 30*time.Second)
		e.checkWasPending(t, want)
		e.waitResolved(t, "IndeximaNodeDownReported", 60*time.Second)
	}) {
		return
	}

	t.Run("NODE_DOWN after a restart without the state file fires", func(t *testing.T) {
		// Without its state file the exporter counts again from 0 at its
		// first contact (nothing logged before it is counted), and learns
		// the latest reports from its look-back: node1's, older than the
		// window, fires nothing. node3 then reports node1 again: a new
		// report, which fires.
		restartAt := time.Now()
		e.exp.state = ""
		e.restartExporter(t, nil)
		sim.ReportNodeDown(keys[2], keys[0])
		want := e.clusterLabels("IndeximaNodeDownReported", "critical", "down_node", "node1")
		e.waitAlert(t, want, "firing", 30*time.Second)
		e.checkWasPending(t, want)
		for _, s := range prom.alertsSince(t, time.Since(restartAt)) {
			got := maps.Clone(s.Metric)
			delete(got, "alertstate")
			delete(got, "__name__")
			if !maps.Equal(got, want) && !scrapeHiccup(s) {
				t.Errorf("unexpected alert after a restart without state file: %s", describeAlerts([]sample{s}))
			}
		}
		e.waitResolved(t, "IndeximaNodeDownReported", 60*time.Second)
	})
}

// restartExporter kills the exporter (SIGKILL: a crash), runs during while it
// is down, starts it again and waits until Prometheus scraped the new
// process with every node up.
func (e *scenario) restartExporter(t *testing.T, during func()) {
	t.Helper()
	// The newest sample of the last minute, not an instant query: a scrape
	// that failed on a loaded machine (a 1 s timeout missed) leaves the
	// series stale, and an instant query then finds nothing.
	oldStart := e.value(t, `last_over_time(process_start_time_seconds{job="indexima"}[1m])`)
	e.exp.kill(t)
	if during != nil {
		during()
	}
	e.exp.start(t)
	waitQuery(t, e.prom, fmt.Sprintf(`process_start_time_seconds{job="indexima"} > %f and on () count(indexima_up == 1) == 3`, oldStart), 30*time.Second)
}

// scrapeHiccup tells whether an ALERTS sample is IndeximaExporterDown
// pending: a scrape that failed (the restart, or a 1s scrape timeout missed
// on a loaded machine) makes it pending for a moment. Firing is never
// tolerated: its `for` (10s here) is far longer than any such hiccup.
func scrapeHiccup(s sample) bool {
	return s.Metric["alertname"] == "IndeximaExporterDown" && s.Metric["alertstate"] == "pending"
}

// scenario holds what the phases of the test share.
type scenario struct {
	prom *prometheusServer
	exp  *exporterRun
}

// clusterLabels returns the full label set of an alert about a cluster as a
// whole (aggregated over its nodes): alertname, severity, job and the given
// pairs; no instance, no node.
func (e *scenario) clusterLabels(alertname, severity string, kv ...string) map[string]string {
	m := e.labels(alertname, severity, kv...)
	delete(m, "instance")
	return m
}

// checkOneAlert checks from the ALERTS series that over the last d the
// alert had one label set: one alert for the incident, however many nodes
// showed it.
func (e *scenario) checkOneAlert(t *testing.T, alertname string, d time.Duration) {
	t.Helper()
	sets := map[string]bool{}
	for _, s := range e.prom.alertsSince(t, d) {
		if s.Metric["alertname"] == alertname {
			got := maps.Clone(s.Metric)
			delete(got, "alertstate")
			sets[fmt.Sprint(got)] = true
		}
	}
	if len(sets) != 1 {
		t.Errorf("%s: %d distinct alerts over the incident, want 1: %v", alertname, len(sets), slices.Sorted(maps.Keys(sets)))
	}
}

// labels returns the full label set an alert of the exporter's job must
// have: alertname, severity, job, instance and the given pairs.
func (e *scenario) labels(alertname, severity string, kv ...string) map[string]string {
	m := map[string]string{"alertname": alertname, "severity": severity, "job": "indexima", "instance": e.exp.addr}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// waitAlert waits until an active alert with exactly the labels want is in
// state, and returns it.
func (e *scenario) waitAlert(t *testing.T, want map[string]string, state string, timeout time.Duration) alert {
	t.Helper()
	var found alert
	var seen []alert
	eventually(t, timeout, fmt.Sprintf("alert %v %s", want, state), func() bool {
		as, err := e.prom.alerts()
		if err != nil {
			t.Logf("alerts: %v", err)
			return false
		}
		seen = as
		for _, a := range as {
			if maps.Equal(a.Labels, want) && a.State == state {
				found = a
				return true
			}
		}
		return false
	}, func() string { return fmt.Sprintf("active alerts: %+v", seen) })
	return found
}

// checkWasPending checks from the ALERTS series that the alert was pending
// before it fired (every rule has a `for`).
func (e *scenario) checkWasPending(t *testing.T, labels map[string]string) {
	t.Helper()
	var sel []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		sel = append(sel, fmt.Sprintf("%s=%q", k, labels[k]))
	}
	expr := fmt.Sprintf(`max_over_time(ALERTS{%s, alertstate="pending"}[2m])`, strings.Join(sel, ", "))
	s, err := e.prom.query(expr)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) == 0 {
		t.Errorf("alert %v fired without being pending first (%s is empty)", labels, expr)
	}
}

// waitResolved waits until no alert of that name is active.
func (e *scenario) waitResolved(t *testing.T, alertname string, timeout time.Duration) {
	t.Helper()
	var active []alert
	eventually(t, timeout, alertname+" resolved", func() bool {
		as, err := e.prom.alerts()
		if err != nil {
			return false
		}
		active = active[:0]
		for _, a := range as {
			if a.Labels["alertname"] == alertname {
				active = append(active, a)
			}
		}
		return len(active) == 0
	}, func() string { return fmt.Sprintf("still active: %+v", active) })
}

// value returns the single value of an instant query.
func (e *scenario) value(t *testing.T, expr string) float64 {
	t.Helper()
	s, err := e.prom.query(expr)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 1 {
		t.Fatalf("%s: want one sample, got %d", expr, len(s))
	}
	return sampleValue(t, s[0])
}

func sampleValue(t *testing.T, s sample) float64 {
	t.Helper()
	str, _ := s.Value[1].(string)
	v, err := strconv.ParseFloat(str, 64)
	if err != nil {
		t.Fatalf("sample value %v: %v", s.Value, err)
	}
	return v
}

// waitQuery waits until expr returns at least one sample.
func waitQuery(t *testing.T, prom *prometheusServer, expr string, timeout time.Duration) {
	t.Helper()
	var last string
	eventually(t, timeout, "data for "+expr, func() bool {
		s, err := prom.query(expr)
		last = fmt.Sprintf("%d samples, err %v", len(s), err)
		return err == nil && len(s) > 0
	}, func() string { return last })
}

func describeAlerts(ss []sample) string {
	var out []string
	for _, s := range ss {
		out = append(out, fmt.Sprint(s.Metric))
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

// checkDashboards runs every query of every shipped dashboard, variables set
// to "All" and the rate interval to 10s (10 scrapes), and requires data; and
// the annotations of the NODE_DOWN report and the memory-low episode.
func checkDashboards(t *testing.T, prom *prometheusServer) {
	t.Helper()
	ds, err := dashboards.Load(dashboards.Files)
	if err != nil {
		t.Fatal(err)
	}
	vals := dashboards.AllValues(ds)
	maps.Copy(vals, dashboards.Builtins("10s", "5m"))
	n := 0
	for _, d := range ds {
		for _, q := range d.Queries() {
			expr, err := dashboards.Substitute(q.Expr, vals)
			if err != nil {
				t.Errorf("%s %s: %v", q.Dashboard, q.Where, err)
				continue
			}
			n++
			s, err := prom.query(expr)
			switch {
			case err != nil:
				t.Errorf("%s %s: %v\n%s", q.Dashboard, q.Where, err, expr)
			case len(s) == 0:
				t.Errorf("%s %s: no data\n%s", q.Dashboard, q.Where, expr)
			}
		}
	}
	if n == 0 {
		t.Fatal("no dashboard query found")
	}
	t.Logf("%d dashboard queries returned data", n)

	// The annotations mark events: over a rate interval spanning the whole
	// test, those of the events this test drove have data.
	drove := map[string]bool{`annotation "NODE_DOWN reports"`: true, `annotation "MEMORY_LOW episodes"`: true}
	maps.Copy(vals, dashboards.Builtins("30m", "30m"))
	for _, d := range ds {
		for _, q := range d.Annotations() {
			expr, err := dashboards.Substitute(q.Expr, vals)
			if err != nil {
				t.Errorf("%s %s: %v", q.Dashboard, q.Where, err)
				continue
			}
			s, err := prom.query(expr)
			switch {
			case err != nil:
				t.Errorf("%s %s: %v\n%s", q.Dashboard, q.Where, err, expr)
			case len(s) == 0 && drove[q.Where]:
				t.Errorf("%s %s: no mark for the event the test drove\n%s", q.Dashboard, q.Where, expr)
			}
			delete(drove, q.Where)
		}
	}
	for where := range drove {
		t.Errorf("no dashboard has the %s", where)
	}
}
