package dashboards

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// annotationCase is what one overview annotation must mark: the series a
// matching event makes, on a node whose other event counters also grow.
type annotationCase struct {
	name   string            // the annotation's name
	event  string            // the counter that grows at minute 3
	labels map[string]string // the labels of the mark
}

var overviewAnnotations = []annotationCase{
	{"NODE_DOWN reports", "NODE_DOWN", map[string]string{"node": "core-1"}},
	{"Cluster stops and starts", "CLUSTER_STOP", map[string]string{"node": "core-1", "event": "CLUSTER_STOP"}},
	{"Cluster stops and starts", "CLUSTER_START", map[string]string{"node": "core-1", "event": "CLUSTER_START"}},
	{"MEMORY_LOW episodes", "MEMORY_LOW", map[string]string{"node": "core-1"}},
}

// TestOverviewAnnotations: the overview marks NODE_DOWN reports, cluster
// stops and starts, and MEMORY_LOW episodes on its time series, from
// Prometheus queries on the datasource variable. Each query runs in
// `promtool test rules` (Prometheus's own engine, on each tested line) over
// a node whose counter of that event grows once, at minute 3, while its
// counters of unmarked events grow all the time: the mark is there at the
// event and within the rate interval after it, not before, not once the
// interval has passed, and never for the other events.
func TestOverviewAnnotations(t *testing.T) {
	var overview Dashboard
	for _, d := range loadAll(t) {
		if d.File == "indexima-overview.json" {
			overview = d
		}
	}
	if overview.Model == nil {
		t.Fatal("no indexima-overview.json")
	}
	exprs := map[string]string{}
	a, _ := overview.Model["annotations"].(map[string]any)
	list, _ := a["list"].([]any)
	for _, item := range list {
		am, _ := item.(map[string]any)
		if am["builtIn"] != nil {
			continue
		}
		name, _ := am["name"].(string)
		ds, _ := am["datasource"].(map[string]any)
		if ds["type"] != "prometheus" || ds["uid"] != "${datasource}" {
			t.Errorf("annotation %q: datasource %v, want the prometheus ${datasource}", name, am["datasource"])
		}
		if am["enable"] != true || am["titleFormat"] == "" {
			t.Errorf("annotation %q: want it enabled, with a title", name)
		}
		exprs[name], _ = am["expr"].(string)
	}
	vals := AllValues([]Dashboard{overview})
	// $__rate_interval as Grafana derives it from a 1m scrape interval (4 scrapes).
	for k, v := range Builtins("4m", "1h") {
		vals[k] = v
	}
	for _, c := range overviewAnnotations {
		expr, ok := exprs[c.name]
		if !ok {
			t.Fatalf("the overview has no annotation %q (has %v)", c.name, exprs)
		}
		if exprs[c.name], ok = substitute(t, expr, vals); !ok {
			return
		}
	}
	file := filepath.Join(t.TempDir(), "annotations.test.yml")
	if err := os.WriteFile(file, annotationTests(t, exprs), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, line := range testkit.PrometheusLines {
		t.Run("prometheus-"+line.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var out bytes.Buffer
			cmd := exec.CommandContext(ctx, line.Promtool(t), "test", "rules", file)
			cmd.Dir = filepath.Dir(file)
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Run(); err != nil {
				t.Fatalf("promtool test rules: %v\n%s", err, out.String())
			}
		})
	}
}

func substitute(t *testing.T, expr string, vals map[string]string) (string, bool) {
	t.Helper()
	out, err := Substitute(expr, vals)
	if err != nil {
		t.Error(err)
		return "", false
	}
	return out, true
}

// annotationTests is a promtool unit test file: one test per case, its
// event's counter at 0 until minute 3 and 1 from then on, the counters of
// events no annotation marks growing by one every minute, those of the other
// marked events flat.
func annotationTests(t *testing.T, exprs map[string]string) []byte {
	t.Helper()
	events := []string{"NODE_DOWN", "CLUSTER_STOP", "CLUSTER_START", "MEMORY_LOW", "TABLE_LOADED", "HYPER_INDEX_UNLOADED"}
	type sample struct {
		Labels string  `yaml:"labels"`
		Value  float64 `yaml:"value"`
	}
	type exprTest struct {
		Expr       string   `yaml:"expr"`
		EvalTime   string   `yaml:"eval_time"`
		ExpSamples []sample `yaml:"exp_samples"`
	}
	type series struct {
		Series string `yaml:"series"`
		Values string `yaml:"values"`
	}
	type unitTest struct {
		Name        string     `yaml:"name"`
		Interval    string     `yaml:"interval"`
		InputSeries []series   `yaml:"input_series"`
		ExprTests   []exprTest `yaml:"promql_expr_test"`
	}
	var tests []unitTest
	for _, c := range overviewAnnotations {
		var in []series
		for _, ev := range events {
			var values string
			switch ev {
			case c.event:
				values = "0 0 0 1x10" // once, between minutes 2 and 3
			case "TABLE_LOADED", "HYPER_INDEX_UNLOADED":
				values = "0+1x12" // events no annotation marks, all the time
			default:
				values = "5x12" // the other marked events, before the test
			}
			in = append(in, series{
				Series: fmt.Sprintf(`indexima_events_total{job="indexima", instance="exporter:9897", node="core-1", event=%q}`, ev),
				Values: values,
			})
		}
		var labels []string
		for _, k := range []string{"event", "node"} { // promtool's order
			if v, ok := c.labels[k]; ok {
				labels = append(labels, fmt.Sprintf("%s=%q", k, v))
			}
		}
		mark := []sample{{Labels: "{" + strings.Join(labels, ", ") + "}", Value: 1}}
		// Presence is the mark; the value (an extrapolated increase) is not.
		expr := "(" + exprs[c.name] + ") * 0 + 1"
		tests = append(tests, unitTest{
			Name:        c.name + ": " + c.event,
			Interval:    "1m",
			InputSeries: in,
			ExprTests: []exprTest{
				{Expr: expr, EvalTime: "2m"},
				{Expr: expr, EvalTime: "3m", ExpSamples: mark},
				{Expr: expr, EvalTime: "5m", ExpSamples: mark},
				{Expr: expr, EvalTime: "8m"},
			},
		})
	}
	b, err := yaml.Marshal(map[string]any{"rule_files": []string{}, "evaluation_interval": "1m", "tests": tests})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
