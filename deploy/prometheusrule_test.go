package deploy

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

var update = flag.Bool("update", false, "rewrite deploy/kubernetes/prometheusrule.yaml from deploy/prometheus/rules")

const (
	plainRuleFile = "deploy/kubernetes/prometheusrule.yaml"
	regenerate    = "go test ./deploy -run TestPlainPrometheusRuleMatchesRules -update"
)

// ruleGroups returns the rule groups of deploy/prometheus/rules/*.yml, the
// files Prometheus itself loads, in file order: the one source of the alerts.
func ruleGroups(t testing.TB) []any {
	t.Helper()
	var groups []any
	for _, f := range globFiles(t, "deploy/prometheus/rules/*.yml") {
		docs := readObjectsFile(t, f)
		if len(docs) != 1 {
			t.Fatalf("%s: %d YAML documents, want 1", f, len(docs))
		}
		g := asList(docs[0]["groups"])
		if len(g) == 0 {
			t.Fatalf("%s: no rule groups", f)
		}
		groups = append(groups, g...)
	}
	return groups
}

func readObjectsFile(t testing.TB, f string) []object {
	t.Helper()
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return decodeAll(t, f, data)
}

// TestPlainPrometheusRuleMatchesRules: the plain manifest cannot include
// files, so it is generated from deploy/prometheus/rules, and this test fails
// as soon as the two differ. (The Helm chart holds a copy of the rule file
// instead, written by make mixin.)
func TestPlainPrometheusRuleMatchesRules(t *testing.T) {
	groups := ruleGroups(t)
	file := filepath.Join(testkit.RepoRoot(t), plainRuleFile)
	if *update {
		writePlainPrometheusRule(t, file, groups)
	}
	objs := readObjectsFile(t, file)
	if len(objs) != 1 || objs[0]["kind"] != "PrometheusRule" {
		t.Fatalf("%s: want exactly one PrometheusRule", plainRuleFile)
	}
	if got := asList(dig(objs[0], "spec", "groups")); !reflect.DeepEqual(got, groups) {
		t.Fatalf("%s differs from deploy/prometheus/rules/*.yml; regenerate it with:\n  %s", plainRuleFile, regenerate)
	}
}

func writePlainPrometheusRule(t testing.TB, file string, groups []any) {
	t.Helper()
	rule := object{
		"apiVersion": "monitoring.coreos.com/v1",
		"kind":       "PrometheusRule",
		"metadata": object{
			"name": "indexima-exporter",
			"labels": object{
				"app.kubernetes.io/name":      "indexima-exporter",
				"app.kubernetes.io/component": "exporter",
			},
		},
		"spec": object{"groups": groups},
	}
	var buf bytes.Buffer
	buf.WriteString("# GENERATED from deploy/prometheus/rules/*.yml: do not edit. Regenerate with\n#   " + regenerate + "\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(rule); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", file)
}
