package dashboards

import (
	"reflect"
	"strings"
	"testing"
)

func TestMetricNames(t *testing.T) {
	cases := []struct {
		expr string
		want []string
	}{
		{`up`, []string{"up"}},
		{`up{job=~"a|b"} == 0`, []string{"up"}},
		{`sum by (node, le) (rate(a_bucket{x="}{"}[5m] offset 1h))`, []string{"a_bucket"}},
		{`sum(rate(a_total[1m])) by (node) / ignoring(event) group_left(version) b_info`, []string{"a_total", "b_info"}},
		{`histogram_quantile(0.9, sum by (le) (rate(c_bucket[1m:30s])))`, []string{"c_bucket"}},
		{"a or on (job, instance) b * 0\nunless c", []string{"a", "b", "c"}},
		{`count_values("version", build_info) > bool 1`, []string{"build_info"}},
		{`foo @ start() - foo offset -5m`, []string{"foo"}},
		{`{__name__="named"} + 1e3 + 0x1f + Inf + NaN`, []string{"named"}},
		{`time() - max without (event) (last_seen)`, []string{"last_seen"}},
		{`label_replace(x, "dst", "$1", "src", "(.*)")`, []string{"x"}},
		{"# a comment naming not_a_metric\nreal_metric", []string{"real_metric"}},
		{`a and b unless c or atan2(d, e)`, []string{"a", "b", "c", "d", "e"}},
		{`scalar(vector(1))`, []string{}},
		{`a:recorded:rate5m`, []string{"a:recorded:rate5m"}},
		{`x{a='it\'s'} + y{b="q\"}"}`, []string{"x", "y"}},
	}
	for _, c := range cases {
		got, err := MetricNames(c.expr)
		if err != nil {
			t.Errorf("MetricNames(%q): %v", c.expr, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("MetricNames(%q) = %q, want %q", c.expr, got, c.want)
		}
	}
}

func TestMetricNamesErrors(t *testing.T) {
	for _, expr := range []string{`a{b="c"`, `sum(a[5m)`, `a{b="c}`, `{job="x"}`, `a]`} {
		if got, err := MetricNames(expr); err == nil {
			t.Errorf("MetricNames(%q) = %q, want an error", expr, got)
		}
	}
}

func TestSubstitute(t *testing.T) {
	vals := map[string]string{"node": ".*", "job": "indexima", "__range": "1h", "__range_s": "3600", "__rate_interval": "1m"}
	got, err := Substitute(`a{node=~"$node", job=~"${job}", j2="${job:regex}", j3="[[job]]"}[$__rate_interval] + $__range_s + b[$__range] + c{x=~"^a$"}`, vals)
	if err != nil {
		t.Fatal(err)
	}
	want := `a{node=~".*", job=~"indexima", j2="indexima", j3="indexima"}[1m] + 3600 + b[1h] + c{x=~"^a$"}`
	if got != want {
		t.Errorf("Substitute:\n got %s\nwant %s", got, want)
	}
	if _, err := Substitute(`a{node=~"$nodes"}`, map[string]string{"node": ".*"}); err == nil || !strings.Contains(err.Error(), "$nodes") {
		t.Errorf("Substitute with an unknown variable: err %v, want one naming $nodes", err)
	}
}

func TestVariableExpr(t *testing.T) {
	cases := map[string]struct {
		expr string
		ok   bool
	}{
		`label_values(indexima_up{job=~"$job", a=","}, node)`: {`indexima_up{job=~"$job", a=","}`, true},
		`label_values(job)`:                        {"", false},
		`query_result(topk(3, rate(a_total[5m])))`: {`topk(3, rate(a_total[5m]))`, true},
		`metrics(indexima_.*)`:                     {"", false},
	}
	for q, want := range cases {
		got, ok := VariableExpr(q)
		if got != want.expr || ok != want.ok {
			t.Errorf("VariableExpr(%q) = %q, %v; want %q, %v", q, got, ok, want.expr, want.ok)
		}
	}
}
