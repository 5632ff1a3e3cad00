package deploy

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
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
	r := mustRun(t, 2*time.Minute, testkit.RepoRoot(t), tool(t, "helm"), args...)
	requireNoHelmWarning(t, args, r)
	return decodeAll(t, "helm template", []byte(r.stdout))
}

// requireNoHelmWarning fails on a helm command that warned: anything on its
// standard error (Helm's "found symbolic link in path", a deprecation) or a
// [WARNING] of helm lint. A user sees every one of them at every command.
func requireNoHelmWarning(t *testing.T, args []string, r result) {
	t.Helper()
	if strings.TrimSpace(r.stderr) != "" || strings.Contains(r.stdout, "[WARNING]") {
		t.Errorf("helm %s warned:\n%s", strings.Join(args, " "), r)
	}
}

func TestHelmLint(t *testing.T) {
	helm := tool(t, "helm")
	for _, values := range append([]string{""}, relFiles(t, chartDir+"/ci/*-values.yaml")...) {
		args := []string{"lint", "--strict", chartDir}
		if values != "" {
			args = append(args, "-f", values)
		}
		r := mustRun(t, 2*time.Minute, testkit.RepoRoot(t), helm, args...)
		if !strings.Contains(r.stdout, "0 chart(s) failed") {
			t.Errorf("helm %s:\n%s", strings.Join(args, " "), r)
		}
		requireNoHelmWarning(t, args, r)
	}
}

func TestHelmDefaultRender(t *testing.T) {
	objs := helmTemplate(t, nil)
	kinds := requireValid(t, kubeconform(t, toYAML(t, objs...)))
	requireKinds(t, kinds, "Deployment", "Service", "ConfigMap", "ServiceAccount")
	for _, k := range []string{"Secret", "ServiceMonitor", "PrometheusRule", "PersistentVolumeClaim", "ScrapeConfig"} {
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
	if s := dig(w, "spec", "strategy"); s != nil {
		t.Errorf("default strategy %v, want Kubernetes' default (rolling update) without a claim", s)
	}
	if args := stringList(dig(w, "spec", "template", "spec", "containers", 0, "args")); slices.Contains(args, "--scrape.probe-only") {
		t.Errorf("default args %v: /metrics must poll the nodes without a ScrapeConfig probing them", args)
	}
}

// TestHelmStateFileOnPersistentVolumeClaim: with persistence the state
// file lives on a claim the chart creates, so that events during a
// rescheduling are counted after it, and the Deployment recreates its pod
// rather than rolling it: never two pods on one claim.
func TestHelmStateFileOnPersistentVolumeClaim(t *testing.T) {
	valuesFile := filepath.Join(testkit.RepoRoot(t), chartDir, "ci", "persistence-values.yaml")
	objs := helmTemplate(t, []string{valuesFile})
	kinds := requireValid(t, kubeconform(t, toYAML(t, objs...)))
	requireKinds(t, kinds, "Deployment", "PersistentVolumeClaim")
	w := find(t, objs, "Deployment", "release-indexima-exporter")
	checkHardened(t, w)
	if dig(w, "spec", "strategy", "type") != "Recreate" || dig(w, "spec", "replicas") != 1 {
		t.Errorf("strategy %v, replicas %v: want Recreate and 1 with a claim", dig(w, "spec", "strategy"), dig(w, "spec", "replicas"))
	}
	pvc := find(t, objs, "PersistentVolumeClaim", "release-indexima-exporter-state")
	if dig(pvc, "spec", "resources", "requests", "storage") != "128Mi" || dig(pvc, "spec", "storageClassName") != "standard" ||
		fmt.Sprint(dig(pvc, "spec", "accessModes")) != "[ReadWriteOnce]" {
		t.Errorf("claim spec %v: want the values' size, class and ReadWriteOnce", dig(pvc, "spec"))
	}
	if dig(pvc, "metadata", "annotations", "helm.sh/resource-policy") != "keep" {
		t.Errorf("claim annotations %v: want the values'", dig(pvc, "metadata", "annotations"))
	}
	checkStateOnClaim(t, w, "release-indexima-exporter-state")
}

// checkStateOnClaim: the state file's directory is the claim's volume.
func checkStateOnClaim(t *testing.T, w object, claim string) {
	t.Helper()
	c := dig(w, "spec", "template", "spec", "containers", 0)
	var stateFile string
	for _, a := range stringList(dig(c, "args")) {
		if v, ok := strings.CutPrefix(a, "--events.state-file="); ok {
			stateFile = v
		}
	}
	if stateFile == "" {
		t.Fatalf("no --events.state-file in %v", dig(c, "args"))
	}
	var volume string
	for _, m := range asList(dig(c, "volumeMounts")) {
		if str(dig(m, "mountPath")) == filepath.Dir(stateFile) {
			volume = str(dig(m, "name"))
		}
	}
	var got any
	for _, v := range asList(dig(w, "spec", "template", "spec", "volumes")) {
		if str(dig(v, "name")) == volume {
			got = dig(v, "persistentVolumeClaim", "claimName")
		}
	}
	if got != claim {
		t.Errorf("%s is on volume %q, whose claim is %v: want %s", stateFile, volume, got, claim)
	}
}

func TestHelmStateFileOnExistingClaim(t *testing.T) {
	objs := helmTemplate(t, nil, "eventsStateFile.enabled=true", "eventsStateFile.persistence.enabled=true",
		"eventsStateFile.persistence.existingClaim=indexima-state")
	requireValid(t, kubeconform(t, toYAML(t, objs...)))
	if n := len(byKind(objs, "PersistentVolumeClaim")); n != 0 {
		t.Errorf("existingClaim given, yet the chart renders %d claim(s)", n)
	}
	w := find(t, objs, "Deployment", "release-indexima-exporter")
	if dig(w, "spec", "strategy", "type") != "Recreate" {
		t.Errorf("strategy %v, want Recreate with a claim", dig(w, "spec", "strategy"))
	}
	checkStateOnClaim(t, w, "indexima-state")
}

// TestHelmStateFilePersistenceRefusals: values that would put two pods on
// one claim, or a claim without a state file, are refused with a message.
func TestHelmStateFilePersistenceRefusals(t *testing.T) {
	for _, tc := range []struct {
		sets []string
		want string
	}{
		{[]string{"eventsStateFile.enabled=true", "eventsStateFile.persistence.enabled=true", "replicaCount=2"}, "needs replicaCount: 1"},
		{[]string{"eventsStateFile.persistence.enabled=true"}, "needs eventsStateFile.enabled: true"},
	} {
		args := []string{"template", "release", chartDir}
		for _, s := range tc.sets {
			args = append(args, "--set", s)
		}
		r := run(t, 2*time.Minute, testkit.RepoRoot(t), tool(t, "helm"), args...)
		if r.err == nil || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("helm template --set %v: %v, want a refusal saying %q\n%s", tc.sets, r.err, tc.want, r)
		}
	}
}

// TestHelmPackage packages the chart as a release would: the archive holds
// the rule files of rules/, and its appVersion
// is the exporter's version.
func TestHelmPackage(t *testing.T) {
	dir := t.TempDir()
	root := testkit.RepoRoot(t)
	args := []string{"package", chartDir, "--destination", dir}
	requireNoHelmWarning(t, args, mustRun(t, 2*time.Minute, root, tool(t, "helm"), args...))
	version, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	files := readTgz(t, filepath.Join(dir, "indexima-exporter-0.1.0.tgz"))
	var chart struct {
		AppVersion  string            `yaml:"appVersion"`
		Annotations map[string]string `yaml:"annotations"`
	}
	if err := yaml.Unmarshal(files["indexima-exporter/Chart.yaml"], &chart); err != nil {
		t.Fatal(err)
	}
	if chart.AppVersion != strings.TrimSpace(string(version)) {
		t.Errorf("packaged appVersion %q, want the exporter's version %q (VERSION)", chart.AppVersion, version)
	}
	if chart.Annotations["artifacthub.io/license"] != "Apache-2.0" {
		t.Errorf("packaged chart licence annotation %q, want Apache-2.0", chart.Annotations["artifacthub.io/license"])
	}
	rules := globFiles(t, "deploy/prometheus/rules/*.yml")
	for _, f := range rules {
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := files["indexima-exporter/rules/"+filepath.Base(f)]; !ok || !bytes.Equal(got, want) {
			t.Errorf("the packaged chart lacks %s or holds another copy of it", filepath.Base(f))
		}
	}
	for _, want := range []string{"indexima-exporter/values.yaml", "indexima-exporter/templates/deployment.yaml", "indexima-exporter/templates/persistentvolumeclaim.yaml"} {
		if _, ok := files[want]; !ok {
			t.Errorf("the packaged chart lacks %s", want)
		}
	}
}

// readTgz reads the regular files of a .tgz archive (bounded: a chart).
func readTgz(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	files := map[string][]byte{}
	for i := 0; i < 1000; i++ {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(io.LimitReader(tr, 16<<20))
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = data
	}
	t.Fatalf("%s: more than 1000 entries", path)
	return nil
}

func TestHelmFullValuesRender(t *testing.T) {
	valuesFile := filepath.Join(testkit.RepoRoot(t), chartDir, "ci", "full-values.yaml")
	objs := helmTemplate(t, []string{valuesFile})
	kinds := requireValid(t, kubeconform(t, toYAML(t, objs...)))
	requireKinds(t, kinds, "Deployment", "Service", "ConfigMap", "Secret", "ServiceAccount", "ServiceMonitor", "PrometheusRule", "ScrapeConfig")

	w := find(t, objs, "Deployment", "release-indexima-exporter")
	checkHardened(t, w)
	checkConfigWiring(t, objs, w, false)
	checkServiceMonitorSelects(t, objs)

	c := dig(w, "spec", "template", "spec", "containers", 0)
	if got := dig(c, "image"); got != "registry.internal:5000/monitoring/indexima_exporter:0.2.0" {
		t.Errorf("image = %v", got)
	}
	args := stringList(dig(c, "args"))
	for _, want := range []string{"--log.level=debug", "--no-collector.tables", "--events.state-file=/var/lib/indexima_exporter/events.state", "--scrape.probe-only"} {
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

// TestHelmProbeScrapeConfig: probeScrapeConfig.enabled renders a
// ScrapeConfig that discovers the nodes from the chart's own Service (/sd)
// with the relabelling of deploy/prometheus/prometheus-probe.yml (which the
// e2e test runs against a real Prometheus), and the exporter runs with
// --scrape.probe-only so that the ServiceMonitor's /metrics polls no node.
func TestHelmProbeScrapeConfig(t *testing.T) {
	objs := helmTemplate(t, nil, "probeScrapeConfig.enabled=true", "serviceMonitor.enabled=true", "service.port=9100")
	requireKinds(t, requireValid(t, kubeconform(t, toYAML(t, objs...))), "ScrapeConfig", "ServiceMonitor")
	sc := find(t, objs, "ScrapeConfig", "release-indexima-exporter-probe")
	svc := find(t, objs, "Service", "release-indexima-exporter")
	wantURL := fmt.Sprintf("http://%s.%s.svc:%v/sd", dig(svc, "metadata", "name"), dig(svc, "metadata", "namespace"), dig(svc, "spec", "ports", 0, "port"))
	if got := dig(sc, "spec", "httpSDConfigs", 0, "url"); got != wantURL || dig(sc, "spec", "metricsPath") != "/probe" {
		t.Errorf("ScrapeConfig discovers from %v with path %v; want %s and /probe", got, dig(sc, "spec", "metricsPath"), wantURL)
	}
	if dig(sc, "spec", "scrapeInterval") != "30s" || dig(sc, "spec", "scrapeTimeout") != "25s" || dig(sc, "spec", "httpSDConfigs", 0, "refreshInterval") != "1m" {
		t.Errorf("ScrapeConfig defaults: %v", dig(sc, "spec"))
	}

	// The relabelling is the shipped one, in the Operator's spelling.
	var shipped object
	data, err := os.ReadFile(filepath.Join(testkit.RepoRoot(t), "deploy", "prometheus", "prometheus-probe.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &shipped); err != nil {
		t.Fatal(err)
	}
	camel := map[string]string{"source_labels": "sourceLabels", "target_label": "targetLabel"}
	var want []any
	for _, j := range asList(shipped["scrape_configs"]) {
		if dig(j, "metrics_path") != "/probe" {
			continue
		}
		for _, rc := range asList(dig(j, "relabel_configs")) {
			op := object{}
			for k, v := range rc.(object) {
				if c, ok := camel[k]; ok {
					k = c
				}
				op[k] = v
			}
			want = append(want, op)
		}
	}
	if got := asList(dig(sc, "spec", "relabelings")); len(want) == 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("ScrapeConfig relabelings\n got %v\nwant %v (prometheus-probe.yml)", got, want)
	}

	w := find(t, objs, "Deployment", "release-indexima-exporter")
	if args := stringList(dig(w, "spec", "template", "spec", "containers", 0, "args")); !slices.Contains(args, "--scrape.probe-only") {
		t.Errorf("args %v lack --scrape.probe-only: /metrics would poll every node the probes poll", args)
	}
	if sm := find(t, objs, "ServiceMonitor", "release-indexima-exporter"); dig(sm, "spec", "endpoints", 0, "path") != "/metrics" {
		t.Errorf("the ServiceMonitor no longer scrapes the exporter's own /metrics: %v", dig(sm, "spec", "endpoints"))
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

// TestHelmChartHoldsTheShippedRules: the chart holds no symbolic link (Helm
// warns of one at every command), and its rules/ is the copy `make mixin`
// writes of deploy/prometheus/rules: the same files, byte for byte, so the
// PrometheusRule cannot drift from the rules Prometheus loads.
func TestHelmChartHoldsTheShippedRules(t *testing.T) {
	root := testkit.RepoRoot(t)
	err := filepath.WalkDir(filepath.Join(root, chartDir), func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Type()&os.ModeSymlink != 0 {
			t.Errorf("%s is a symbolic link: Helm warns of it at every command; copy the files in (make mixin does the rules)", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	shipped := globFiles(t, "deploy/prometheus/rules/*.yml")
	copies := globFiles(t, chartDir+"/rules/*.yml")
	names := func(files []string) []string {
		out := make([]string, len(files))
		for i, f := range files {
			out[i] = filepath.Base(f)
		}
		slices.Sort(out)
		return out
	}
	if !slices.Equal(names(shipped), names(copies)) {
		t.Fatalf("the chart's rules/ holds %v, deploy/prometheus/rules %v: run make mixin", names(copies), names(shipped))
	}
	for _, f := range shipped {
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(root, chartDir, "rules", filepath.Base(f)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s/rules/%s differs from deploy/prometheus/rules/%s: run make mixin", chartDir, filepath.Base(f), filepath.Base(f))
		}
	}
}
