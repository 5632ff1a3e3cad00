package deploy

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/config"
	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

const unitFile = "deploy/systemd/indexima_exporter.service"

// unitEntries reads a systemd unit as section -> key -> values (a key may repeat).
func unitEntries(t *testing.T, file string) map[string]map[string][]string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]map[string][]string{}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.Trim(line, "[]")
			out[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s: unexpected line %q", file, line)
			}
			out[section][k] = append(out[section][k], v)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSystemdUnitVerifies runs systemd-analyze verify, which reports unknown
// keys and bad values as warnings (exit status 0): any line about the unit fails.
func TestSystemdUnitVerifies(t *testing.T) {
	bin := tool(t, "systemd-analyze")
	data, err := os.ReadFile(filepath.Join(testkit.RepoRoot(t), unitFile))
	if err != nil {
		t.Fatal(err)
	}
	// verify also checks that ExecStart's program exists: point it at one that does.
	text := strings.ReplaceAll(string(data), "/usr/local/bin/indexima_exporter", "/bin/true")
	dir := t.TempDir()
	f := filepath.Join(dir, "indexima_exporter.service")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, time.Minute, dir, bin, "verify", f)
	if r.err != nil || strings.Contains(r.stdout+r.stderr, "indexima_exporter.service") {
		t.Fatalf("systemd-analyze verify: %v\n%s", r.err, r)
	}

	// The same check must catch a mistake.
	bad := filepath.Join(dir, "bad.service")
	if err := os.WriteFile(bad, []byte(strings.Replace(text, "Restart=on-failure", "Restart=sometimes", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, time.Minute, dir, bin, "verify", bad); !strings.Contains(r.stdout+r.stderr, "bad.service") {
		t.Fatalf("systemd-analyze verify did not report a bad Restart= value:\n%s", r)
	}
}

func TestSystemdUnitIsHardened(t *testing.T) {
	u := unitEntries(t, filepath.Join(testkit.RepoRoot(t), unitFile))
	svc := u["Service"]
	want := map[string]string{
		"DynamicUser":             "yes",
		"NoNewPrivileges":         "yes",
		"ProtectSystem":           "strict",
		"ProtectHome":             "yes",
		"PrivateTmp":              "yes",
		"PrivateDevices":          "yes",
		"ProtectKernelTunables":   "yes",
		"ProtectKernelModules":    "yes",
		"ProtectControlGroups":    "yes",
		"RestrictSUIDSGID":        "yes",
		"MemoryDenyWriteExecute":  "yes",
		"CapabilityBoundingSet":   "",
		"Restart":                 "on-failure",
		"ExecReload":              "/bin/kill -HUP $MAINPID",
		"StateDirectory":          "indexima_exporter",
		"SystemCallArchitectures": "native",
	}
	for k, v := range want {
		got, ok := svc[k]
		if !ok || got[len(got)-1] != v {
			t.Errorf("[Service] %s = %q, want %q", k, got, v)
		}
	}
	if exec := svc["ExecStart"]; len(exec) != 1 || !strings.HasPrefix(exec[0], "/usr/local/bin/indexima_exporter ") {
		t.Errorf("ExecStart = %q, want /usr/local/bin/indexima_exporter $ARGS", exec)
	}
	if u["Install"]["WantedBy"] == nil {
		t.Error("[Install] WantedBy missing: systemctl enable would do nothing")
	}
}

// TestSystemdExampleConfigParses: the example indexima.yml names the
// password where LoadCredential puts it, and the exporter accepts it; the
// default flags point at the documented paths.
func TestSystemdExampleConfigParses(t *testing.T) {
	root := testkit.RepoRoot(t)
	u := unitEntries(t, filepath.Join(root, unitFile))
	cred := u["Service"]["LoadCredential"]
	if len(cred) != 1 {
		t.Fatalf("LoadCredential = %q, want one", cred)
	}
	credName, _, _ := strings.Cut(cred[0], ":")
	credPath := "/run/credentials/indexima_exporter.service/" + credName

	data, err := os.ReadFile(filepath.Join(root, "deploy/systemd/indexima.yml.example"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "password_file: "+credPath+"\n") {
		t.Fatalf("indexima.yml.example does not read the password from %s", credPath)
	}
	tmp := t.TempDir()
	local := filepath.Join(tmp, credName)
	if err := os.WriteFile(local, []byte("test-password\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := config.Parse([]byte(strings.ReplaceAll(string(data), credPath, local)), tmp); err != nil {
		t.Fatalf("the exporter refuses indexima.yml.example: %v", err)
	}

	env, err := os.ReadFile(filepath.Join(root, "deploy/systemd/indexima_exporter.default"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--config.file=/etc/indexima_exporter/indexima.yml", "--events.state-file=/var/lib/" + u["Service"]["StateDirectory"][0] + "/"} {
		if !strings.Contains(string(env), want) {
			t.Errorf("indexima_exporter.default: ARGS lack %s", want)
		}
	}
}
