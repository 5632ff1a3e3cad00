package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// prometheusServer is a real Prometheus on loopback.
type prometheusServer struct {
	url  string
	proc *process
}

// startPrometheus starts Prometheus with the given rule files and scrape
// configurations (the YAML list under scrape_configs:), scraping and
// evaluating every second, and waits until it is ready.
func startPrometheus(t *testing.T, bin, dir string, ruleFiles []string, scrapeConfigs string) *prometheusServer {
	t.Helper()
	return startPrometheusFlags(t, bin, dir, nil, ruleFiles, scrapeConfigs)
}

// startPrometheusFlags is startPrometheus with more command-line flags
// (feature flags).
func startPrometheusFlags(t *testing.T, bin, dir string, flags, ruleFiles []string, scrapeConfigs string) *prometheusServer {
	t.Helper()
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: [%s]
scrape_configs:
%s`, quoteAll(ruleFiles), scrapeConfigs)
	cfgFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	// Port 0: Prometheus binds a port of its own and logs it (at info,
	// its default level: "Listening on" is an info line).
	proc := startProcess(t, "prometheus", bin, append([]string{
		"--config.file=" + cfgFile,
		"--web.listen-address=127.0.0.1:0",
		"--storage.tsdb.path=" + filepath.Join(dir, "tsdb"),
	}, flags...)...)
	p := &prometheusServer{url: "http://" + proc.listening(t, 30*time.Second), proc: proc}
	waitReady(t, proc, p.url+"/-/ready", 30*time.Second)
	return p
}

// indeximaJob is the scrape configuration of the alerting test: one job
// named like the shipped example's (the IndeximaExporterDown alert selects
// on "indexima"), with the scraper's default protocols.
func indeximaJob(target string) string {
	return fmt.Sprintf("  - job_name: indexima\n    static_configs:\n      - targets: [%q]\n", target)
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// apiGet calls a Prometheus API endpoint and decodes its data field.
func (p *prometheusServer) apiGet(path string, params url.Values, data any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u := p.url + path
	if len(params) > 0 {
		u += "?" + params.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return err
	}
	var env struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return fmt.Errorf("GET %s: status %d, undecodable body %.200q: %v", u, resp.StatusCode, body, err)
	}
	if env.Status != "success" {
		return fmt.Errorf("GET %s: status %d: %s", u, resp.StatusCode, env.Error)
	}
	return json.Unmarshal(env.Data, data)
}

// sample is one element of an instant vector.
type sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// query runs an instant query now. Scalars and strings come back as one
// sample without labels.
func (p *prometheusServer) query(expr string) ([]sample, error) {
	var data struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := p.apiGet("/api/v1/query", url.Values{"query": {expr}}, &data); err != nil {
		return nil, err
	}
	switch data.ResultType {
	case "vector":
		var v []sample
		err := json.Unmarshal(data.Result, &v)
		return v, err
	case "scalar", "string":
		var pair [2]any
		if err := json.Unmarshal(data.Result, &pair); err != nil {
			return nil, err
		}
		return []sample{{Value: pair}}, nil
	default:
		return nil, fmt.Errorf("query %q: result type %q", expr, data.ResultType)
	}
}

// alert is an active alert of /api/v1/alerts.
type alert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"`
}

func (p *prometheusServer) alerts() ([]alert, error) {
	var data struct {
		Alerts []alert `json:"alerts"`
	}
	err := p.apiGet("/api/v1/alerts", nil, &data)
	return data.Alerts, err
}

// lastEvaluation returns the oldest last-evaluation time of the rule groups:
// every group has been evaluated at least once since then.
func (p *prometheusServer) lastEvaluation() (time.Time, error) {
	var data struct {
		Groups []struct {
			Name           string    `json:"name"`
			LastEvaluation time.Time `json:"lastEvaluation"`
		} `json:"groups"`
	}
	if err := p.apiGet("/api/v1/rules", nil, &data); err != nil {
		return time.Time{}, err
	}
	if len(data.Groups) == 0 {
		return time.Time{}, fmt.Errorf("no rule group loaded")
	}
	oldest := data.Groups[0].LastEvaluation
	for _, g := range data.Groups[1:] {
		if g.LastEvaluation.Before(oldest) {
			oldest = g.LastEvaluation
		}
	}
	return oldest, nil
}

// waitEvaluatedAfter waits until every rule group has been evaluated after after.
func (p *prometheusServer) waitEvaluatedAfter(t *testing.T, after time.Time, timeout time.Duration) {
	t.Helper()
	var last time.Time
	var err error
	eventually(t, timeout, fmt.Sprintf("every rule group evaluated after %s", after.Format(time.RFC3339Nano)), func() bool {
		last, err = p.lastEvaluation()
		return err == nil && last.After(after)
	}, func() string {
		return fmt.Sprintf("oldest last evaluation %s, err %v", last.Format(time.RFC3339Nano), err)
	})
}

// alertsSince returns the alerts (pending or firing) Prometheus recorded in
// its ALERTS series over the last d (truncated to whole seconds, so that the
// window never reaches back before d), one sample per alert and state.
func (p *prometheusServer) alertsSince(t *testing.T, d time.Duration) []sample {
	t.Helper()
	secs := int(d.Truncate(time.Second) / time.Second)
	if secs < 1 {
		secs = 1
	}
	s, err := p.query(fmt.Sprintf("max_over_time(ALERTS[%ds])", secs))
	if err != nil {
		t.Fatalf("ALERTS history: %v", err)
	}
	return s
}

// target is an active target of /api/v1/targets.
type target struct {
	Labels     map[string]string `json:"labels"`
	ScrapePool string            `json:"scrapePool"`
	ScrapeURL  string            `json:"scrapeUrl"`
	Health     string            `json:"health"`
	LastError  string            `json:"lastError"`
}

func (p *prometheusServer) targets() ([]target, error) {
	var data struct {
		ActiveTargets []target `json:"activeTargets"`
	}
	err := p.apiGet("/api/v1/targets", url.Values{"state": {"active"}}, &data)
	return data.ActiveTargets, err
}

// checkScrapesClean waits until every target's latest scrape succeeded
// without error. A format Prometheus cannot parse fails every scrape and
// keeps its error here; a scrape that timed out once on a loaded machine
// (1s timeout) passes at the next.
func (p *prometheusServer) checkScrapesClean(t *testing.T) {
	t.Helper()
	var bad []string
	eventually(t, 30*time.Second, "every target scraped without error", func() bool {
		ts, err := p.targets()
		if err != nil || len(ts) == 0 {
			bad = []string{fmt.Sprintf("%d targets, err %v", len(ts), err)}
			return false
		}
		bad = bad[:0]
		for _, tg := range ts {
			if tg.Health != "up" || tg.LastError != "" {
				bad = append(bad, fmt.Sprintf("%v: health %q, last scrape error %q", tg.Labels, tg.Health, tg.LastError))
			}
		}
		return len(bad) == 0
	}, func() string { return strings.Join(bad, "; ") })
}
