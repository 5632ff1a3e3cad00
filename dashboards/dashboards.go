// Package dashboards holds the Grafana dashboards of indexima_exporter (the
// JSON files beside this file, ready for Grafana's file provisioning, see
// provisioning/; rendered from the monitoring mixin in ../mixin) and the code that reads their PromQL queries, which the
// tests use to prove every query parses, names only metrics the exporter
// exposes, and returns data from a real Prometheus (e2e/).
package dashboards

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// Files holds the dashboards, as provisioned.
//
//go:embed *.json
var Files embed.FS

// Dashboard is one dashboard file, decoded as generic JSON: the tests look
// at it the way Grafana does, not through a schema of our own.
type Dashboard struct {
	File  string
	Model map[string]any
}

// Query is one PromQL expression of a dashboard: a panel target or the
// selector of a template variable's label_values().
type Query struct {
	Dashboard string // file name
	Where     string // `panel 12 "Nodes up" target A` or `variable node`
	Expr      string // as written, with Grafana variables
}

// Load reads every dashboard of fsys (use Files for the shipped ones).
func Load(fsys fs.FS) ([]Dashboard, error) {
	names, err := fs.Glob(fsys, "*.json")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []Dashboard
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		out = append(out, Dashboard{File: path.Base(n), Model: m})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no dashboard (*.json) found")
	}
	return out, nil
}

// Panels returns every panel of d, those nested in collapsed rows included.
func (d Dashboard) Panels() []map[string]any {
	var out []map[string]any
	var walk func(list []any)
	walk = func(list []any) {
		for _, p := range list {
			pm, ok := p.(map[string]any)
			if !ok {
				continue
			}
			out = append(out, pm)
			if nested, ok := pm["panels"].([]any); ok {
				walk(nested)
			}
		}
	}
	panels, _ := d.Model["panels"].([]any)
	walk(panels)
	return out
}

// Variables returns the template variables of d.
func (d Dashboard) Variables() []map[string]any {
	tpl, _ := d.Model["templating"].(map[string]any)
	list, _ := tpl["list"].([]any)
	var out []map[string]any
	for _, v := range list {
		if vm, ok := v.(map[string]any); ok {
			out = append(out, vm)
		}
	}
	return out
}

// Source is the kind of data source d queries, the query of its
// "datasource" variable: prometheus, or loki for the dashboard of the event
// log's lines.
func (d Dashboard) Source() string {
	for _, v := range d.Variables() {
		if v["name"] == "datasource" && v["type"] == "datasource" {
			s, _ := v["query"].(string)
			return s
		}
	}
	return ""
}

// Queries returns every PromQL expression of d: panel targets' expr and the
// metric selectors of query variables (label_values(SELECTOR, label) and
// query_result(EXPR)); none for a dashboard of Loki (LogQueries).
func (d Dashboard) Queries() []Query {
	if d.Source() != "prometheus" {
		return nil
	}
	out := d.targets()
	for _, v := range d.Variables() {
		if v["type"] != "query" {
			continue
		}
		if expr, ok := VariableExpr(VariableQuery(v)); ok {
			out = append(out, Query{Dashboard: d.File, Where: fmt.Sprintf("variable %v", v["name"]), Expr: expr})
		}
	}
	return out
}

// Annotations returns the PromQL expression of every annotation of d that
// queries Prometheus (Grafana's built-in one has none). They mark events on
// the time series panels: a query has data only around an event, so unlike
// Queries they return nothing on a quiet cluster.
func (d Dashboard) Annotations() []Query {
	if d.Source() != "prometheus" {
		return nil
	}
	return d.annotations()
}

func (d Dashboard) annotations() []Query {
	a, _ := d.Model["annotations"].(map[string]any)
	list, _ := a["list"].([]any)
	var out []Query
	for _, item := range list {
		am, _ := item.(map[string]any)
		expr, _ := am["expr"].(string)
		if am["builtIn"] != nil || strings.TrimSpace(expr) == "" {
			continue
		}
		out = append(out, Query{Dashboard: d.File, Where: fmt.Sprintf("annotation %q", am["name"]), Expr: expr})
	}
	return out
}

// LogQueries returns the LogQL expressions of a dashboard of Loki: panel
// targets and annotations (none for a dashboard of Prometheus).
func (d Dashboard) LogQueries() []Query {
	if d.Source() != "loki" {
		return nil
	}
	return append(d.targets(), d.annotations()...)
}

// targets returns the expressions of the panels' targets.
func (d Dashboard) targets() []Query {
	var out []Query
	for _, p := range d.Panels() {
		targets, _ := p["targets"].([]any)
		for _, t := range targets {
			tm, _ := t.(map[string]any)
			if expr, _ := tm["expr"].(string); strings.TrimSpace(expr) != "" {
				out = append(out, Query{Dashboard: d.File, Where: fmt.Sprintf("panel %v %q target %v", p["id"], p["title"], tm["refId"]), Expr: expr})
			}
		}
	}
	return out
}

// VariableQuery returns the query text of a query variable, whichever form
// Grafana saved it in (a string, or an object with a "query" field).
func VariableQuery(v map[string]any) string {
	switch q := v["query"].(type) {
	case string:
		return q
	case map[string]any:
		s, _ := q["query"].(string)
		return s
	}
	return ""
}

// VariableExpr returns the PromQL expression inside a Prometheus variable
// query: the selector of label_values(SELECTOR, label), the expression of
// query_result(EXPR); false for label_values(label), label_names() and
// metrics(regex), which hold none.
func VariableExpr(q string) (string, bool) {
	q = strings.TrimSpace(q)
	for _, fn := range []string{"label_values", "query_result"} {
		if !strings.HasPrefix(q, fn+"(") || !strings.HasSuffix(q, ")") {
			continue
		}
		inner := strings.TrimSpace(q[len(fn)+1 : len(q)-1])
		if fn == "query_result" {
			return inner, inner != ""
		}
		// label_values(SELECTOR, label): the label is after the last comma
		// outside braces and quotes; label_values(label) has no selector.
		if i := lastTopLevelComma(inner); i >= 0 {
			return strings.TrimSpace(inner[:i]), true
		}
		return "", false
	}
	return "", false
}

func lastTopLevelComma(s string) int {
	depth, last := 0, -1
	var quote rune
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'' || r == '`':
			quote = r
		case r == '{' || r == '(' || r == '[':
			depth++
		case r == '}' || r == ')' || r == ']':
			depth--
		case r == ',' && depth == 0:
			last = i
		}
	}
	return last
}
