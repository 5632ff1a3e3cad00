package deploy

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

const chartDir = "deploy/helm/indexima-exporter"

// helmTemplate renders the chart with the values files and --set pairs.
func helmTemplate(t *testing.T, valuesFiles []string, sets ...string) []object {
	t.Helper()
	args := []string{"template", "release", chartDir, "--namespace", "monitoring"}
	for _, f := range valuesFiles {
		args = append(args, "-f", f)
	}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	r := mustRun(t, 2*time.Minute, repoRoot(t), tool(t, "helm"), args...)
	return decodeAll(t, "helm template", []byte(r.stdout))
}

func TestHelmLint(t *testing.T) {
	helm := tool(t, "helm")
	for _, values := range append([]string{""}, relFiles(t, chartDir+"/ci/*-values.yaml")...) {
		args := []string{"lint", "--strict", chartDir}
		if values != "" {
			args = append(args, "-f", values)
		}
		r := mustRun(t, 2*time.Minute, repoRoot(t), helm, args...)
		if !strings.Contains(r.stdout, "0 chart(s) failed") {
			t.Errorf("helm %s:\n%s", strings.Join(args, " "), r)
		}
	}
}

func TestHelmDefaultRender(t *testing.T) {
	objs := helmTemplate(t, nil)
	kinds := requireValid(t, kubeconform(t, toYAML(t, objs...)))
	requireKinds(t, kinds, "Deployment", "Service", "ConfigMap", "ServiceAccount")
	for _, k := range []string{"Secret", "ServiceMonitor", "PrometheusRule"} {
		if kinds[k] != 0 {
			t.Errorf("default values render a %s; it must be opt-in", k)
		}
	}
	w := find(t, objs, "Deployment", "release-indexima-exporter")
	checkHardened(t, w)
	checkConfigWiring(t, objs, w, false)
	if got := dig(w, "spec", "template", "spec", "containers", 0, "image"); got != "registry.example.com/monitoring/indexima_exporter:0.1.0" {
		t.Errorf("image = %v, want the chart appVersion as tag", got)
	}
}

func TestHelmFullValuesRender(t *testing.T) {
	valuesFile := filepath.Join(repoRoot(t), chartDir, "ci", "full-values.yaml")
	objs := helmTemplate(t, []string{valuesFile})
	kinds := requireValid(t, kubeconform(t, toYAML(t, objs...)))
	requireKinds(t, kinds, "Deployment", "Service", "ConfigMap", "Secret", "ServiceAccount", "ServiceMonitor", "PrometheusRule")

	w := find(t, objs, "Deployment", "release-indexima-exporter")
	checkHardened(t, w)
	checkConfigWiring(t, objs, w, false)
	checkServiceMonitorSelects(t, objs)

	c := dig(w, "spec", "template", "spec", "containers", 0)
	if got := dig(c, "image"); got != "registry.internal:5000/monitoring/indexima_exporter:0.2.0" {
		t.Errorf("image = %v", got)
	}
	args := stringList(dig(c, "args"))
	for _, want := range []string{"--log.level=debug", "--no-collector.tables", "--events.state-file=/var/lib/indexima_exporter/events.state"} {
		if !slices.Contains(args, want) {
			t.Errorf("args %v lack %s", args, want)
		}
	}
	if dig(c, "resources", "limits", "memory") != "256Mi" {
		t.Errorf("resources not taken from values: %v", dig(c, "resources"))
	}

	// The password reaches the pod only through the Secret, intact.
	s := find(t, objs, "Secret", "release-indexima-exporter-console")
	raw, err := base64.StdEncoding.DecodeString(str(dig(s, "data", "password")))
	if err != nil || string(raw) != "s3cret with spaces" {
		t.Errorf("Secret password = %q (%v)", raw, err)
	}
	cm := find(t, objs, "ConfigMap", "release-indexima-exporter")
	for _, o := range []any{cm, w} {
		if strings.Contains(string(toYAML(t, o.(object))), "s3cret") {
			t.Errorf("the password appears in %v", o.(object)["kind"])
		}
	}

	// The PrometheusRule carries exactly the rules Prometheus loads.
	pr := byKind(objs, "PrometheusRule")[0]
	if got := asList(dig(pr, "spec", "groups")); !reflect.DeepEqual(got, ruleGroups(t)) {
		t.Errorf("chart PrometheusRule groups differ from deploy/prometheus/rules/*.yml")
	}
	if dig(pr, "metadata", "labels", "release") != "prometheus" {
		t.Errorf("prometheusRule.labels not applied: %v", dig(pr, "metadata", "labels"))
	}
	sm := byKind(objs, "ServiceMonitor")[0]
	if dig(sm, "spec", "endpoints", 0, "interval") != "60s" || dig(sm, "spec", "endpoints", 0, "relabelings", 0, "targetLabel") != "env" {
		t.Errorf("serviceMonitor values not applied: %v", dig(sm, "spec", "endpoints"))
	}
	if dig(sm, "spec", "convertClassicHistogramsToNHCB") != true {
		t.Errorf("serviceMonitor.convertClassicHistogramsToNHCB not applied: %v", dig(sm, "spec"))
	}
}

// TestHelmServiceMonitorKeepsClassicHistogramsByDefault: the Prometheus 3
// setting is opt-in, so a Prometheus 2.x behind the Operator gets nothing
// it does not know.
func TestHelmServiceMonitorKeepsClassicHistogramsByDefault(t *testing.T) {
	objs := helmTemplate(t, nil, "serviceMonitor.enabled=true")
	requireValid(t, kubeconform(t, toYAML(t, objs...)))
	sm := find(t, objs, "ServiceMonitor", "release-indexima-exporter")
	if v, set := dig(sm, "spec").(object)["convertClassicHistogramsToNHCB"]; set {
		t.Errorf("default values set convertClassicHistogramsToNHCB: %v", v)
	}
}

func TestHelmExistingSecret(t *testing.T) {
	objs := helmTemplate(t, nil,
		"console.username=monitor", "console.existingSecret=indexima-console-credentials", "console.existingSecretKey=pw")
	requireValid(t, kubeconform(t, toYAML(t, objs...)))
	if s := byKind(objs, "Secret"); len(s) != 0 {
		t.Fatalf("existingSecret given, yet the chart renders a Secret")
	}
	w := find(t, objs, "Deployment", "release-indexima-exporter")
	var secretName string
	for _, v := range asList(dig(w, "spec", "template", "spec", "volumes")) {
		if n := str(dig(v, "secret", "secretName")); n != "" {
			secretName = n
		}
	}
	if secretName != "indexima-console-credentials" {
		t.Errorf("secret volume = %q, want the existing Secret", secretName)
	}
	cm := find(t, objs, "ConfigMap", "release-indexima-exporter")
	if !strings.Contains(str(dig(cm, "data", "indexima.yml")), "password_file: /etc/indexima_exporter/secret/pw") {
		t.Errorf("password_file does not name the existing Secret's key:\n%s", dig(cm, "data", "indexima.yml"))
	}
	checkConfigWiring(t, objs, w, true)
}

// TestHelmRawConfig: values.config replaces the generated indexima.yml
// verbatim (the multi-cluster form).
func TestHelmRawConfig(t *testing.T) {
	raw := "clusters:\n  prod:\n    console: {url: \"https://prod:8082\"}\n    nodes: [{host: p1}]\n  test:\n    console: {url: \"https://test:8082\"}\n    nodes: [{host: t1, port: 9000}]\n"
	f := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(f, toYAML(t, object{"config": raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	objs := helmTemplate(t, []string{f})
	cm := find(t, objs, "ConfigMap", "release-indexima-exporter")
	if got := str(dig(cm, "data", "indexima.yml")); got != raw {
		t.Errorf("indexima.yml = %q, want %q", got, raw)
	}
	checkConfigWiring(t, objs, find(t, objs, "Deployment", "release-indexima-exporter"), false)
}

// TestHelmRulesAreLinked: the chart's rules/ is a link to
// deploy/prometheus/rules, so the PrometheusRule cannot drift from them.
func TestHelmRulesAreLinked(t *testing.T) {
	link := filepath.Join(repoRoot(t), chartDir, "rules")
	fi, err := os.Lstat(link)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is not a symbolic link to ../../prometheus/rules", link)
	}
	got, err := filepath.EvalSymlinks(link)
	if err != nil {
		t.Fatal(err)
	}
	want, err := filepath.EvalSymlinks(filepath.Join(repoRoot(t), "deploy", "prometheus", "rules"))
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("%s resolves to %s, want %s", link, got, want)
	}
}
