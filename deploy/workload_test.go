package deploy

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/indexima-exporter/indexima_exporter/config"
)

// exporterPort is the exporter's default listen port (docs: ":9897").
const exporterPort = 9897

// workloads returns the Deployments and StatefulSets among objs.
func workloads(objs []object) []object {
	return append(byKind(objs, "Deployment"), byKind(objs, "StatefulSet")...)
}

// checkHardened fails unless the workload runs the exporter as the project
// requires: non-root, read-only root, no privilege escalation, no
// capabilities, RuntimeDefault seccomp, bounded resources, health probes.
func checkHardened(t *testing.T, w object) {
	t.Helper()
	name := fmt.Sprintf("%s %s", w["kind"], str(dig(w, "metadata", "name")))
	pod := dig(w, "spec", "template", "spec")
	if dig(pod, "securityContext", "runAsNonRoot") != true {
		t.Errorf("%s: pod securityContext.runAsNonRoot is not true", name)
	}
	if uid, ok := dig(pod, "securityContext", "runAsUser").(int); !ok || uid == 0 {
		t.Errorf("%s: pod securityContext.runAsUser = %v, want a non-zero uid", name, dig(pod, "securityContext", "runAsUser"))
	}
	if dig(pod, "securityContext", "seccompProfile", "type") != "RuntimeDefault" {
		t.Errorf("%s: pod seccompProfile.type is not RuntimeDefault", name)
	}
	if dig(pod, "automountServiceAccountToken") != false {
		t.Errorf("%s: automountServiceAccountToken is not false (the exporter never calls the API server)", name)
	}
	containers, _ := dig(pod, "containers").([]any)
	if len(containers) != 1 {
		t.Fatalf("%s: %d containers, want 1", name, len(containers))
	}
	c := containers[0]
	sc := dig(c, "securityContext")
	for key, want := range map[string]any{"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true, "runAsNonRoot": true} {
		if got := dig(sc, key); got != want {
			t.Errorf("%s: container securityContext.%s = %v, want %v", name, key, got, want)
		}
	}
	if drop, _ := dig(sc, "capabilities", "drop").([]any); !slices.Contains(drop, any("ALL")) {
		t.Errorf("%s: capabilities.drop = %v, want ALL", name, drop)
	}
	for _, kind := range []string{"requests", "limits"} {
		for _, res := range []string{"cpu", "memory"} {
			if dig(c, "resources", kind, res) == nil {
				t.Errorf("%s: resources.%s.%s missing", name, kind, res)
			}
		}
	}
	var portName string
	for _, p := range asList(dig(c, "ports")) {
		if dig(p, "containerPort") == exporterPort {
			portName = str(dig(p, "name"))
		}
	}
	if portName == "" {
		t.Errorf("%s: no named containerPort %d", name, exporterPort)
	}
	for probe, want := range map[string]string{"livenessProbe": "/-/healthy", "readinessProbe": "/-/ready"} {
		if got := dig(c, probe, "httpGet", "path"); got != want {
			t.Errorf("%s: %s path = %v, want %s", name, probe, got, want)
		}
		if port := dig(c, probe, "httpGet", "port"); port != portName && port != exporterPort {
			t.Errorf("%s: %s port = %v, want %q or %d", name, probe, port, portName, exporterPort)
		}
	}
	if args := strings.Join(stringList(dig(c, "args")), " "); !strings.Contains(args, fmt.Sprintf("--web.listen-address=:%d", exporterPort)) {
		t.Errorf("%s: args %q do not listen on :%d", name, args, exporterPort)
	}
}

// checkConfigWiring follows a workload's --config.file to its ConfigMap and
// each file of that configuration (password_file, TLS files) to a mounted
// volume (and a password_file to a key of its Secret), then
// parses the configuration with the exporter's own config package (the
// Secret mounts replaced by temporary files). secretsMayBeExternal allows a
// Secret that is not among objs (Helm's existingSecret).
func checkConfigWiring(t *testing.T, objs []object, w object, secretsMayBeExternal bool) {
	t.Helper()
	name := fmt.Sprintf("%s %s", w["kind"], str(dig(w, "metadata", "name")))
	pod := dig(w, "spec", "template", "spec")
	c := dig(pod, "containers", 0)

	// Volumes by mount path.
	type mount struct{ configMap, secret string }
	volumes := map[string]object{}
	for _, v := range asList(dig(pod, "volumes")) {
		volumes[str(dig(v, "name"))] = v.(object)
	}
	mounts := map[string]mount{}
	for _, m := range asList(dig(c, "volumeMounts")) {
		v := volumes[str(dig(m, "name"))]
		if v == nil {
			t.Errorf("%s: volumeMount %v names no volume", name, dig(m, "name"))
			continue
		}
		mounts[str(dig(m, "mountPath"))] = mount{configMap: str(dig(v, "configMap", "name")), secret: str(dig(v, "secret", "secretName"))}
	}

	var configFile string
	for _, a := range stringList(dig(c, "args")) {
		if v, ok := strings.CutPrefix(a, "--config.file="); ok {
			configFile = v
		}
	}
	if configFile == "" {
		t.Fatalf("%s: no --config.file argument", name)
	}
	m, ok := mounts[path.Dir(configFile)]
	if !ok || m.configMap == "" {
		t.Fatalf("%s: --config.file=%s is not in a mounted ConfigMap (mounts %v)", name, configFile, mounts)
	}
	cm := find(t, objs, "ConfigMap", m.configMap)
	text := str(dig(cm, "data", path.Base(configFile)))
	if text == "" {
		t.Fatalf("%s: ConfigMap %s has no key %s", name, m.configMap, path.Base(configFile))
	}

	var doc any
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatalf("%s: ConfigMap %s: %v", name, m.configMap, err)
	}
	tmp := t.TempDir()
	replacements := []string{}
	for _, ref := range fileRefs(doc) {
		dir := path.Dir(ref)
		vm, ok := mounts[dir]
		if !ok {
			t.Errorf("%s: %s is in no mounted volume (mounts %v)", name, ref, mounts)
			continue
		}
		if vm.secret != "" && (!secretsMayBeExternal || len(byKind(objs, "Secret")) > 0) {
			s := find(t, objs, "Secret", vm.secret)
			if dig(s, "data", path.Base(ref)) == nil && dig(s, "stringData", path.Base(ref)) == nil {
				t.Errorf("%s: Secret %s has no key %s (for %s)", name, vm.secret, path.Base(ref), ref)
			}
		}
		// The configuration is parsed with each mounted directory replaced by a
		// local one holding placeholder files.
		local := filepath.Join(tmp, strings.ReplaceAll(strings.Trim(dir, "/"), "/", "_"))
		if err := os.MkdirAll(local, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(local, path.Base(ref)), []byte("placeholder\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		replacements = append(replacements, dir+"/", local+"/")
	}
	parsed := strings.NewReplacer(replacements...).Replace(text)
	if _, err := config.Parse([]byte(parsed), tmp); err != nil {
		t.Errorf("%s: the exporter refuses the configuration of ConfigMap %s: %v\n%s", name, m.configMap, err, text)
	}
}

// fileRefs returns every file a decoded configuration names (password and
// TLS files), which the pod must have mounted.
func fileRefs(v any) []string {
	var out []string
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			if k == "password_file" || k == "ca_file" || k == "cert_file" || k == "key_file" {
				out = append(out, str(child))
				continue
			}
			out = append(out, fileRefs(child)...)
		}
	case []any:
		for _, child := range t {
			out = append(out, fileRefs(child)...)
		}
	}
	slices.Sort(out)
	return out
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func stringList(v any) []string {
	var out []string
	for _, e := range asList(v) {
		out = append(out, fmt.Sprint(e))
	}
	return out
}
