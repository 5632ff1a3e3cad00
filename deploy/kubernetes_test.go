package deploy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

func TestPlainManifestsAreValid(t *testing.T) {
	kinds := requireValid(t, kubeconform(t, nil, relFiles(t, "deploy/kubernetes/*.yaml")...))
	requireKinds(t, kinds, "Deployment", "Service", "ConfigMap", "Secret", "ServiceAccount", "ServiceMonitor", "PrometheusRule")
}

func TestShardedExampleIsValid(t *testing.T) {
	kinds := requireValid(t, kubeconform(t, nil, relFiles(t, "deploy/kubernetes/sharded/*.yaml")...))
	requireKinds(t, kinds, "StatefulSet", "Service", "ConfigMap", "Secret")
}

func TestPlainWorkloadsAreHardenedAndWired(t *testing.T) {
	for _, set := range []string{"deploy/kubernetes/*.yaml", "deploy/kubernetes/sharded/*.yaml"} {
		objs := readObjects(t, set)
		ws := workloads(objs)
		if len(ws) == 0 {
			t.Fatalf("%s: no Deployment nor StatefulSet", set)
		}
		for _, w := range ws {
			checkHardened(t, w)
			checkConfigWiring(t, objs, w, false)
		}
	}
}

// TestPlainServiceMonitorSelectsTheService: a ServiceMonitor whose selector
// or port name misses the Service scrapes nothing, silently.
func TestPlainServiceMonitorSelectsTheService(t *testing.T) {
	checkServiceMonitorSelects(t, readObjects(t, "deploy/kubernetes/*.yaml"))
}

func checkServiceMonitorSelects(t *testing.T, objs []object) {
	t.Helper()
	sms := byKind(objs, "ServiceMonitor")
	if len(sms) != 1 {
		t.Fatalf("%d ServiceMonitors, want 1", len(sms))
	}
	sm := sms[0]
	sel, _ := dig(sm, "spec", "selector", "matchLabels").(object)
	if len(sel) == 0 {
		t.Fatal("ServiceMonitor has no matchLabels")
	}
	var svc object
	for _, s := range byKind(objs, "Service") {
		labels, _ := dig(s, "metadata", "labels").(object)
		match := true
		for k, v := range sel {
			if labels[k] != v {
				match = false
			}
		}
		if match {
			svc = s
		}
	}
	if svc == nil {
		t.Fatalf("ServiceMonitor selector %v matches no Service", sel)
	}
	port := dig(sm, "spec", "endpoints", 0, "port")
	found := false
	for _, p := range asList(dig(svc, "spec", "ports")) {
		if dig(p, "name") == port {
			found = true
		}
	}
	if !found {
		t.Errorf("ServiceMonitor port %v is not a port name of Service %v", port, dig(svc, "metadata", "name"))
	}
	// And the Service selects the pods of the workload.
	w := workloads(objs)[0]
	podLabels, _ := dig(w, "spec", "template", "metadata", "labels").(object)
	svcSel, _ := dig(svc, "spec", "selector").(object)
	for k, v := range svcSel {
		if podLabels[k] != v {
			t.Errorf("Service selector %s=%v does not match the pod labels %v", k, v, podLabels)
		}
	}
}

// TestKubeconformRejectsUnknownFields proves that the schemas are strict: a
// misspelt field, which the API server would drop silently, fails validation.
func TestKubeconformRejectsUnknownFields(t *testing.T) {
	objs := readObjects(t, "deploy/kubernetes/*.yaml")
	cases := []struct {
		kind, field string
		mutate      func(o object)
	}{
		{"Deployment", "readOnlyRootFileSystem", func(o object) {
			dig(o, "spec", "template", "spec", "containers", 0, "securityContext").(object)["readOnlyRootFileSystem"] = true
		}},
		{"Deployment", "replica", func(o object) { o["spec"].(object)["replica"] = 2 }},
		{"Service", "targetport", func(o object) { dig(o, "spec", "ports", 0).(object)["targetport"] = 9897 }},
		{"ServiceMonitor", "endpoint", func(o object) { o["spec"].(object)["endpoint"] = []any{} }},
		{"PrometheusRule", "expression", func(o object) {
			dig(o, "spec", "groups", 0, "rules", 0).(object)["expression"] = "up"
		}},
	}
	var stream []object
	for _, c := range cases {
		o := byKind(objs, c.kind)
		if len(o) == 0 {
			t.Fatalf("no %s in deploy/kubernetes", c.kind)
		}
		bad := deepCopy(t, o[0])
		c.mutate(bad)
		stream = append(stream, bad)
	}
	res := kubeconform(t, toYAML(t, stream...))
	if len(res) != len(cases) {
		t.Fatalf("kubeconform reported %d resources, want %d: %+v", len(res), len(cases), res)
	}
	for _, c := range cases {
		found := false
		for _, r := range res {
			if r.Kind == c.kind && r.Status == "statusInvalid" && containsAll(r.Msg, "additional properties", "'"+c.field+"'") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s with unknown field %q was not rejected: %+v", c.kind, c.field, res)
		}
	}
}

// TestSchemasAreStrict: every object schema that lists its properties closes
// the others (strictify.go made _definitions.json so), and every per-kind
// schema points at a definition that exists.
func TestSchemasAreStrict(t *testing.T) {
	dir := filepath.Join(testkit.RepoRoot(t), "deploy", "kubernetes", "schemas")
	var defs struct {
		Definitions map[string]any `json:"definitions"`
	}
	readJSON(t, filepath.Join(dir, "_definitions.json"), &defs)
	if len(defs.Definitions) < 500 {
		t.Fatalf("_definitions.json has %d definitions, want the full Kubernetes set", len(defs.Definitions))
	}
	open := 0
	for name, d := range defs.Definitions {
		open += countOpenObjects(t, name, d)
	}
	if open > 0 {
		t.Fatalf("%d object schemas accept unknown fields; regenerate with strictify.go", open)
	}

	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if filepath.Base(f) == "_definitions.json" {
			continue
		}
		var s map[string]any
		readJSON(t, f, &s)
		if ref, ok := s["$ref"].(string); ok {
			def, found := strings.CutPrefix(ref, "_definitions.json#/definitions/")
			if !found || defs.Definitions[def] == nil {
				t.Errorf("%s: $ref %q names no definition", filepath.Base(f), ref)
			}
			continue
		}
		if n := countOpenObjects(t, filepath.Base(f), s); n > 0 || s["additionalProperties"] != false {
			t.Errorf("%s: hand-written schema is not strict", filepath.Base(f))
		}
	}
}

// countOpenObjects counts object schemas with properties but no
// additionalProperties (and not marked x-kubernetes-preserve-unknown-fields).
func countOpenObjects(t *testing.T, where string, v any) int {
	m, ok := v.(map[string]any)
	if !ok {
		return 0
	}
	n := 0
	props, hasProps := m["properties"].(map[string]any)
	_, hasAdditional := m["additionalProperties"]
	_, preserve := m["x-kubernetes-preserve-unknown-fields"]
	if hasProps && !hasAdditional && !preserve {
		t.Logf("open object schema in %s", where)
		n++
	}
	for k, child := range props {
		n += countOpenObjects(t, where+"."+k, child)
	}
	for _, key := range []string{"items", "additionalProperties"} {
		n += countOpenObjects(t, where+"."+key, m[key])
	}
	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		l, _ := m[key].([]any)
		for _, child := range l {
			n += countOpenObjects(t, where+"."+key, child)
		}
	}
	return n
}

func readJSON(t *testing.T, file string, v any) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}
