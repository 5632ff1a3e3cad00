package dashboards

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

func loadAll(t *testing.T) []Dashboard {
	t.Helper()
	ds, err := Load(Files)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// substituted returns every query of the dashboards, annotations included,
// with Grafana variables replaced by the values a query gets when "All" is
// selected.
func substituted(t *testing.T, ds []Dashboard) []Query {
	t.Helper()
	vals := AllValues(ds)
	for k, v := range Builtins("1m", "1h") {
		vals[k] = v
	}
	var out []Query
	for _, d := range ds {
		for _, q := range append(d.Queries(), d.Annotations()...) {
			expr, err := Substitute(q.Expr, vals)
			if err != nil {
				t.Errorf("%s %s: %v", q.Dashboard, q.Where, err)
				continue
			}
			q.Expr = expr
			out = append(out, q)
		}
	}
	if len(out) == 0 {
		t.Fatal("no PromQL query found in the dashboards")
	}
	return out
}

func TestDashboardStructure(t *testing.T) {
	uids := map[string]string{}
	for _, d := range loadAll(t) {
		m := d.Model
		uid, _ := m["uid"].(string)
		if uid == "" {
			t.Errorf("%s: no uid (provisioned dashboards need a stable one for links)", d.File)
		} else if other, dup := uids[uid]; dup {
			t.Errorf("%s: uid %q already used by %s", d.File, uid, other)
		}
		uids[uid] = d.File
		if title, _ := m["title"].(string); title == "" {
			t.Errorf("%s: no title", d.File)
		}
		if v, _ := m["schemaVersion"].(float64); v < 36 {
			t.Errorf("%s: schemaVersion %v, want at least 36 (Grafana 9+)", d.File, m["schemaVersion"])
		}
		if m["id"] != nil {
			t.Errorf("%s: id %v must be null in a provisioned dashboard", d.File, m["id"])
		}

		vars := map[string]map[string]any{}
		for _, v := range d.Variables() {
			name, _ := v["name"].(string)
			vars[name] = v
		}
		source := d.Source()
		if v := vars["datasource"]; v == nil || v["type"] != "datasource" || source != "prometheus" && source != "loki" {
			t.Errorf("%s: want a template variable \"datasource\" of type datasource for prometheus or loki, got %v", d.File, v)
		}
		// The exporter's series carry job and instance; the event log's
		// lines (Loki) the labels its shipped pipelines give them.
		want := []string{"job", "instance", "cluster", "node"}
		if source == "loki" {
			want = []string{"cluster", "node", "type"}
		}
		for _, name := range want {
			v := vars[name]
			if v == nil {
				t.Errorf("%s: template variable %q missing", d.File, name)
				continue
			}
			// "All" of cluster must send a regex that also matches a missing
			// label: a single cluster has no cluster label at all. The other
			// labels always exist (".+" is the usual All of job and instance).
			want := []any{".*", ".+"}
			if name == "cluster" {
				want = []any{".*"}
			}
			if v["includeAll"] != true || !slices.Contains(want, v["allValue"]) {
				t.Errorf("%s: variable %s: want includeAll with allValue in %q, got includeAll %v allValue %v",
					d.File, name, want, v["includeAll"], v["allValue"])
			}
		}
		if m["editable"] != false {
			t.Errorf("%s: editable %v, want false: a provisioned dashboard is replaced at each reload, edits would be lost", d.File, m["editable"])
		}

		ids := map[float64]string{}
		for _, p := range d.Panels() {
			title, _ := p["title"].(string)
			id, ok := p["id"].(float64)
			if strings.TrimSpace(title) == "" {
				t.Errorf("%s: panel %v has no title", d.File, p["id"])
			}
			if !ok {
				t.Errorf("%s: panel %q has no numeric id", d.File, title)
			} else if other, dup := ids[id]; dup {
				t.Errorf("%s: panel id %v used by %q and %q", d.File, id, other, title)
			}
			ids[id] = title
			if p["type"] == "row" {
				continue
			}
			targets, _ := p["targets"].([]any)
			if len(targets) == 0 {
				t.Errorf("%s: panel %q has no query", d.File, title)
			}
			if ds, _ := p["datasource"].(map[string]any); ds["uid"] != "${datasource}" || ds["type"] != source {
				t.Errorf("%s: panel %q: datasource %v, want {type: %s, uid: ${datasource}}", d.File, title, p["datasource"], source)
			}
		}
		checkNoHardcodedDatasource(t, d.File, "", m)
	}
}

// checkNoHardcodedDatasource walks the whole model: every datasource uid
// must be the template variable (or Grafana's built-in annotation source),
// so that the dashboard works with whatever Prometheus the user picks.
func checkNoHardcodedDatasource(t *testing.T, file, path string, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			if k == "datasource" {
				switch ds := child.(type) {
				case string:
					if ds != "${datasource}" && ds != "$datasource" && ds != "-- Grafana --" {
						t.Errorf("%s: %s.datasource = %q: hard-coded data source", file, path, ds)
					}
				case map[string]any:
					uid, _ := ds["uid"].(string)
					if uid != "${datasource}" && uid != "$datasource" && uid != "-- Grafana --" {
						t.Errorf("%s: %s.datasource.uid = %q: hard-coded data source", file, path, uid)
					}
				}
				continue
			}
			checkNoHardcodedDatasource(t, file, path+"."+k, child)
		}
	case []any:
		for i, child := range x {
			checkNoHardcodedDatasource(t, file, fmt.Sprintf("%s[%d]", path, i), child)
		}
	}
}

// A variable in an equality matcher (cluster="$cluster") matches nothing
// when "All" is selected or the label is missing: variables go in =~ or !~.
var equalityWithVariable = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*\s*!?=\s*"[^"]*\$`)

func TestDashboardVariablesInRegexMatchers(t *testing.T) {
	for _, d := range loadAll(t) {
		for _, q := range append(d.Queries(), d.Annotations()...) {
			if m := equalityWithVariable.FindString(q.Expr); m != "" {
				t.Errorf("%s %s: %q puts a variable in an equality matcher; use =~ so that All (.*) and a missing label match", q.Dashboard, q.Where, m)
			}
		}
	}
}

// TestDashboardQueriesParse has promtool parse every query: each becomes a
// recording rule of a temporary rule file, which `promtool check rules`
// parses with Prometheus's own PromQL parser, on each tested Prometheus line.
func TestDashboardQueriesParse(t *testing.T) {
	for _, line := range testkit.PrometheusLines {
		t.Run("prometheus-"+line.Name, func(t *testing.T) { dashboardQueriesParse(t, line.Promtool(t)) })
	}
}

func dashboardQueriesParse(t *testing.T, promtool string) {
	qs := substituted(t, loadAll(t))
	type rule struct {
		Record string `yaml:"record"`
		Expr   string `yaml:"expr"`
	}
	var rules []rule
	for i, q := range qs {
		rules = append(rules, rule{Record: fmt.Sprintf("dashboard_query_%d", i), Expr: q.Expr})
	}
	b, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboards", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "dashboard-queries.yml")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, promtool, "check", "rules", "--lint=none", file)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		var index strings.Builder
		for i, q := range qs {
			fmt.Fprintf(&index, "  rule %d = %s %s\n", i+1, q.Dashboard, q.Where)
		}
		t.Fatalf("promtool check rules: %v\n%s\nrules (1-based, as promtool counts them):\n%s", err, out.String(), index.String())
	}
	if want := fmt.Sprintf("SUCCESS: %d rules found", len(qs)); !strings.Contains(out.String(), want) {
		t.Fatalf("promtool check rules: want %q in its output, got:\n%s", want, out.String())
	}
}

// TestDashboardMetricsExist checks that every metric a dashboard queries is
// one the exporter exposes (or one Prometheus adds to every target).
func TestDashboardMetricsExist(t *testing.T) {
	qs := substituted(t, loadAll(t))
	exposed := exporterMetricNames(t)
	missing := map[string][]string{}
	used := 0
	for _, q := range qs {
		names, err := MetricNames(q.Expr)
		if err != nil {
			t.Errorf("%s %s: %v", q.Dashboard, q.Where, err)
			continue
		}
		used += len(names)
		for _, n := range names {
			if !exposed[n] {
				missing[n] = append(missing[n], q.Dashboard+" "+q.Where)
			}
		}
	}
	if used == 0 {
		t.Fatal("no metric name found in any dashboard query")
	}
	var names []string
	for n := range missing {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Errorf("metric %s is not exposed by the exporter; used by:\n  %s", n, strings.Join(missing[n], "\n  "))
	}
	if t.Failed() {
		var all []string
		for n := range exposed {
			all = append(all, n)
		}
		sort.Strings(all)
		t.Logf("exposed: %s", strings.Join(all, " "))
	}
}

// TestProvisioning checks the Grafana provisioning files: the dashboards
// provider reads the directory the dashboards are mounted at, and the data
// source is a Prometheus one.
func TestProvisioning(t *testing.T) {
	var dash struct {
		APIVersion int `yaml:"apiVersion"`
		Providers  []struct {
			Name    string `yaml:"name"`
			Type    string `yaml:"type"`
			Options struct {
				Path string `yaml:"path"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	readYAMLFile(t, filepath.Join("provisioning", "dashboards", "dashboards.yml"), &dash)
	if dash.APIVersion != 1 || len(dash.Providers) == 0 {
		t.Fatalf("provisioning/dashboards/dashboards.yml: want apiVersion 1 and a provider, got %+v", dash)
	}
	for _, p := range dash.Providers {
		if p.Type != "file" || p.Options.Path != "/var/lib/grafana/dashboards" {
			t.Errorf("provider %q: type %q path %q, want file provider of /var/lib/grafana/dashboards", p.Name, p.Type, p.Options.Path)
		}
	}
	var src struct {
		APIVersion  int `yaml:"apiVersion"`
		Datasources []struct {
			Name string `yaml:"name"`
			Type string `yaml:"type"`
			URL  string `yaml:"url"`
		} `yaml:"datasources"`
	}
	readYAMLFile(t, filepath.Join("provisioning", "datasources", "datasources.yml"), &src)
	if src.APIVersion != 1 || len(src.Datasources) == 0 || src.Datasources[0].Type != "prometheus" || src.Datasources[0].URL == "" {
		t.Fatalf("provisioning/datasources/datasources.yml: want apiVersion 1 and a prometheus data source with a URL, got %+v", src)
	}
}

func readYAMLFile(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
