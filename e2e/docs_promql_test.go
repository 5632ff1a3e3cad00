package e2e

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/dashboards"
	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// demoOpening is how long the demo's scripted opening takes to show every
// kind of event (internal/demo: the last step comes 43 s after the start),
// with a margin: the examples are run at least this long, and their claims
// checked over all of it.
const demoOpening = 60 * time.Second

// TestDocsPromQLOnTheDemo runs every PromQL expression of the README and
// docs/*.md (docExpressions: the ```promql blocks and the code spans that
// are PromQL, read from the text, so a new example is tested without being
// listed here) against a real Prometheus scraping the exporter's --demo,
// once per tested Prometheus line (both scrape the same demo). Each must
// parse and return data within a few minutes, unless the text says when it
// is empty: a filter (indexima_up == 0) says it by its condition, and then
// what it filters must have data; otherwise the text around it says
// "empty". Every metric it names must exist. A value the text claims
// ("(should stay 0)") must hold at every second of the run.
func TestDocsPromQLOnTheDemo(t *testing.T) {
	exprs, err := docExpressions("..")
	if err != nil {
		t.Fatal(err)
	}
	checkDocExtraction(t, exprs)

	bin := testkit.ExporterBinary(t)
	exp := startProcess(t, "indexima_exporter", bin, "--demo", "--web.listen-address=127.0.0.1:0")
	addr := exp.listening(t, 30*time.Second)
	waitReady(t, exp, "http://"+addr+"/-/ready", 30*time.Second)
	for _, line := range testkit.PrometheusLines {
		t.Run("prometheus-"+line.Name, func(t *testing.T) {
			t.Parallel()
			docsOnDemo(t, line, addr, exprs)
		})
	}
}

// checkDocExtraction: the extraction finds what the docs are known to
// hold, so that a change of the Markdown that hides the examples from it
// fails here rather than testing nothing.
func checkDocExtraction(t *testing.T, exprs []docExpr) {
	t.Helper()
	claims, files := 0, map[string]bool{}
	for _, d := range exprs {
		if d.claim != nil {
			claims++
		}
		files[strings.Split(d.where, ":")[0]] = true
	}
	for _, f := range []string{"README.md", "docs/runbook.md", "docs/alerts.md", "docs/counting.md"} {
		if !files[f] {
			t.Errorf("no PromQL found in %s", f)
		}
	}
	if len(exprs) < 40 || claims < 3 {
		t.Fatalf("found %d expressions, %d with a claimed value, in the README and docs/: the extraction is broken", len(exprs), claims)
	}
}

func docsOnDemo(t *testing.T, line testkit.PrometheusLine, addr string, exprs []docExpr) {
	prom := startPrometheus(t, line.Prometheus(t), t.TempDir(), nil, indeximaJob(addr))
	start := time.Now()
	waitQuery(t, prom, "indexima_up", 30*time.Second)

	// Every expression is run until it gives what the text says, and the
	// demo has shown its opening; then the claims are read over the run.
	why := map[int]string{}
	for i := range exprs {
		why[i] = "not run yet"
	}
	deadline := start.Add(4 * time.Minute)
	for len(why) > 0 || time.Since(start) < demoOpening {
		for i := range why {
			if ok, reason := docExprAnswers(prom, exprs[i]); ok {
				delete(why, i)
			} else {
				why[i] = reason
			}
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(2 * time.Second)
	}
	for i, reason := range why {
		t.Errorf("%s\n\t%s", exprs[i], reason)
	}

	end := time.Now()
	for _, d := range exprs {
		if d.claim != nil {
			checkClaim(t, prom, d, start, end)
		}
	}

	// The metrics each names exist: on the demo, or, for a family that has
	// no series until something happens (a failure's reason, a dropped
	// label), in the README's metric table, which a test of
	// test/integration keeps equal to a real scrape's families.
	var names []string
	if err := prom.apiGet("/api/v1/label/__name__/values", nil, &names); err != nil {
		t.Fatal(err)
	}
	listed := readmeMetrics(t)
	for _, d := range exprs {
		used, err := dashboards.MetricNames(d.query)
		if err != nil {
			t.Errorf("%s: %v", d, err)
		}
		for _, n := range used {
			family := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")
			if !slices.Contains(names, n) && !listed[family] {
				t.Errorf("%s: no metric %s, neither on the demo nor in the README's metric table", d, n)
			}
		}
	}
	t.Logf("%d expressions of the README and docs/ answered as their text says (%d with a claimed value), over %s of the demo",
		len(exprs)-len(why), countClaims(exprs), end.Sub(start).Round(time.Second))
}

// docExprAnswers runs one expression now: whether it answers as its text
// says, else why not.
func docExprAnswers(prom *prometheusServer, d docExpr) (bool, string) {
	s, err := prom.query(d.query)
	switch {
	case err != nil:
		return false, err.Error()
	case len(s) > 0 || d.emptyOK:
		return true, ""
	}
	operand, filter := filterOperand(d.query)
	if !filter {
		return false, "no data, and the text does not say when it is empty"
	}
	s, err = prom.query(operand)
	switch {
	case err != nil:
		return false, fmt.Sprintf("the filtered operand %q: %v", operand, err)
	case len(s) == 0:
		return false, fmt.Sprintf("no data, not even for what it filters (%s)", operand)
	}
	return true, ""
}

// checkClaim reads a claimed value's expression at every second of the
// run: it must have data, and every sample of every series the claim.
func checkClaim(t *testing.T, prom *prometheusServer, d docExpr, start, end time.Time) {
	t.Helper()
	var data struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
			Values [][2]any          `json:"values"`
		} `json:"result"`
	}
	params := url.Values{"query": {d.query}, "start": {unixString(start)}, "end": {unixString(end)}, "step": {"1"}}
	if err := prom.apiGet("/api/v1/query_range", params, &data); err != nil {
		t.Errorf("%s: %v", d, err)
		return
	}
	if len(data.Result) == 0 {
		t.Errorf("%s: claimed to stay %g, but no data over the run", d, *d.claim)
		return
	}
	samples, wrong := 0, 0
	var first string
	for _, series := range data.Result {
		for _, v := range series.Values {
			samples++
			s, _ := v[1].(string)
			if f, err := strconv.ParseFloat(s, 64); err != nil || f != *d.claim {
				if wrong == 0 {
					first = fmt.Sprintf("%s at %v", s, series.Metric)
				}
				wrong++
			}
		}
	}
	if wrong > 0 {
		t.Errorf("%s: claimed to stay %g, but %d of %d samples differ (the first: %s)", d, *d.claim, wrong, samples, first)
	}
}

// readmeMetrics are the metric names of the README's metric table.
func readmeMetrics(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range metricRowRE.FindAllStringSubmatch(string(b), -1) {
		out[m[1]] = true
	}
	return out
}

func unixString(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)
}

func countClaims(exprs []docExpr) int {
	n := 0
	for _, d := range exprs {
		if d.claim != nil {
			n++
		}
	}
	return n
}
