package dashboards

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Builtins are plausible values of Grafana's global variables for a query
// sent straight to Prometheus. Callers may override them (the end-to-end
// test uses short windows because its Prometheus scrapes every second).
func Builtins(rateInterval, rangeDur string) map[string]string {
	return map[string]string{
		"__rate_interval": rateInterval,
		"__interval":      rateInterval,
		"__range":         rangeDur,
		"__interval_ms":   "60000",
		"__range_s":       "3600",
		"__range_ms":      "3600000",
	}
}

// AllValues maps every template variable of the dashboards to the value
// Grafana sends for "All" (the allValue, ".*" here), which is what a query
// gets when nothing is selected.
func AllValues(ds []Dashboard) map[string]string {
	vals := map[string]string{}
	for _, d := range ds {
		for _, v := range d.Variables() {
			name, _ := v["name"].(string)
			if all, ok := v["allValue"].(string); ok && all != "" {
				vals[name] = all
			} else if v["type"] == "datasource" {
				vals[name] = "prometheus"
			} else {
				vals[name] = ".*"
			}
		}
	}
	return vals
}

var leftoverVar = regexp.MustCompile(`\$\{?[A-Za-z_][A-Za-z0-9_]*|\[\[[A-Za-z_]`)

// Substitute replaces Grafana variables in expr ($name, ${name},
// ${name:format} and [[name]]) by vals, longest names first so that
// $__range_s is not read as $__range followed by "_s". A variable left
// unreplaced is an error: the dashboard names a variable it does not define.
func Substitute(expr string, vals map[string]string) (string, error) {
	names := make([]string, 0, len(vals))
	for n := range vals {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	out := expr
	for _, n := range names {
		v := vals[n]
		out = regexp.MustCompile(`\$\{`+regexp.QuoteMeta(n)+`(:[^}]*)?\}`).ReplaceAllLiteralString(out, v)
		out = strings.ReplaceAll(out, "[["+n+"]]", v)
		out = regexp.MustCompile(`\$`+regexp.QuoteMeta(n)+`\b`).ReplaceAllLiteralString(out, v)
	}
	// A "$" may legitimately end a regular expression inside a string ("^a$"),
	// but never starts an identifier once every variable is replaced.
	if m := leftoverVar.FindString(out); m != "" {
		return "", fmt.Errorf("unknown Grafana variable %q in %q", m, expr)
	}
	return out, nil
}
