package program

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simtest"
	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

// checkSim is a simulated console for the --config.check tests, and a
// configuration of its nodes (plus extra YAML node entries) with password.
func checkSim(t *testing.T, password string, extraNodes ...string) (*simulator.Simulator, string) {
	t.Helper()
	sim, _ := simtest.Start(t, time.Now(), simulator.Config{}, 2)
	dir := t.TempDir()
	writeFile(t, dir, "password", password+"\n")
	var nodes []string
	for i, k := range sim.Nodes() {
		host, port, _ := strings.Cut(k, ":")
		nodes = append(nodes, fmt.Sprintf("{host: %s, port: %s, name: core-%d}", host, port, i+1))
	}
	nodes = append(nodes, extraNodes...)
	return sim, writeFile(t, dir, "indexima.yml", fmt.Sprintf("console: {url: %q, username: exporter, password_file: password, timeout: 5s}\nnodes: [%s]\n",
		sim.URL(), strings.Join(nodes, ", ")))
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimRight(s, "\n"), "\n")
}

// --config.check says what it checked, and that it contacted no console:
// the console saw no call, not even with a wrong password.
func TestConfigCheckContactsNoConsole(t *testing.T) {
	sim, file := checkSim(t, "wrong")
	code, stdout, stderr := runOnce(t, "--config.check", "--config.file="+file)
	if code != 0 || stderr != "" {
		t.Fatalf("status %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"is valid: 1 cluster(s), 2 node(s)", "; checked YAML syntax and keys, every field, password files read, TLS files parsed", "no console contacted"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout %q does not say %q", stdout, want)
		}
	}
	if st := sim.Stats(); len(st.Requests) != 0 {
		t.Errorf("the console received %v", st.Requests)
	}
}

// --config.check.connect logs in once and calls each node once, through the
// console, and says so; each failure is one line on stderr, with status 1.
func TestConfigCheckConnect(t *testing.T) {
	t.Run("all answer", func(t *testing.T) {
		sim, file := checkSim(t, "s3cret")
		code, stdout, stderr := runOnce(t, "--config.check.connect", "--config.file="+file)
		if code != 0 || stderr != "" {
			t.Fatalf("status %d, stderr %q", code, stderr)
		}
		out := lines(stdout)
		if len(out) != 2 || !strings.Contains(out[0], "is valid: 1 cluster(s), 2 node(s)") || strings.Contains(out[0], "no console contacted") ||
			out[1] != fmt.Sprintf(`%s: console %s: logged in as "exporter"; 2 of 2 node(s) answered event/count`, Name, sim.URL()) {
			t.Errorf("stdout:\n%s", stdout)
		}
		st := sim.Stats()
		if st.Logins != 1 || st.Requests["event_count"] != 2 {
			t.Errorf("the console saw %d login(s) and %d event/count call(s), want 1 and 2", st.Logins, st.Requests["event_count"])
		}
		for _, k := range sim.Nodes() {
			if st.NodeRequests[k] != 1 {
				t.Errorf("node %s called %d times, want once", k, st.NodeRequests[k])
			}
		}
	})

	// failure runs the check and wants status 1 and the given lines on
	// stderr, each holding its parts, and each short: one refusal said once,
	// no body quoted, under 200 characters (the client's own error, for the
	// logs, said "refused" three times in 300).
	failure := func(t *testing.T, file string, want ...[]string) string {
		t.Helper()
		code, stdout, stderr := runOnce(t, "--config.check.connect", "--config.file="+file)
		errs := lines(stderr)
		if code != 1 || len(errs) != len(want) {
			t.Fatalf("status %d and %d line(s) on stderr, want 1 and %d:\n%s", code, len(errs), len(want), stderr)
		}
		for i, parts := range want {
			if !strings.HasPrefix(errs[i], Name+": ") {
				t.Errorf("line %q does not start with %q", errs[i], Name+": ")
			}
			for _, p := range parts {
				if !strings.Contains(errs[i], p) {
					t.Errorf("line %q does not hold %q", errs[i], p)
				}
			}
			if len(errs[i]) > 200 || strings.Count(errs[i], "refused") > 1 || strings.Contains(errs[i], "(body:") {
				t.Errorf("line of %d characters, %d times \"refused\", a body quoted: want one short line\n%s", len(errs[i]), strings.Count(errs[i], "refused"), errs[i])
			}
		}
		for _, bad := range []string{"goroutine", "panic", "s3cret"} {
			if strings.Contains(stdout+stderr, bad) {
				t.Errorf("output holds %q:\n%s%s", bad, stdout, stderr)
			}
		}
		return stdout
	}
	t.Run("closed port", func(t *testing.T) {
		sim, file := checkSim(t, "s3cret")
		sim.SetConsoleFault(simulator.Fault{Down: true})
		failure(t, file, []string{"console " + sim.URL(), "console unreachable at login", "is the URL right", "(1 other node(s) not called)"})
	})
	t.Run("wrong password", func(t *testing.T) {
		sim, file := checkSim(t, "wrong")
		failure(t, file, []string{"console " + sim.URL(), "bad credentials", `user "exporter"`, "status 401", "check the user name and the password", "(1 other node(s) not called)"})
		if st := sim.Stats(); st.LoginFailures != 1 || len(st.NodeRequests) != 0 {
			t.Errorf("the console saw %d refused login(s) and node calls %v, want 1 and none", st.LoginFailures, st.NodeRequests)
		}
	})
	t.Run("unknown node", func(t *testing.T) {
		sim, file := checkSim(t, "s3cret", "{host: ghost.test, name: ghost}")
		stdout := failure(t, file, []string{"console " + sim.URL(), "node ghost (ghost.test:9999)", "node unreachable at event_count", "status 502", "Cannot reach node ghost.test:9999"})
		if !strings.Contains(stdout, `logged in as "exporter"; 2 of 3 node(s) answered event/count`) {
			t.Errorf("stdout:\n%s", stdout)
		}
	})
}

// Each cluster is checked on its own: a refusal by one console does not
// hide the other's answer.
func TestConfigCheckConnectClusters(t *testing.T) {
	good, _ := simtest.Start(t, time.Now(), simulator.Config{}, 1)
	bad, _ := simtest.Start(t, time.Now(), simulator.Config{Users: map[string]string{"exporter": "other"}}, 1)
	dir := t.TempDir()
	writeFile(t, dir, "password", "s3cret\n")
	var cfg strings.Builder
	cfg.WriteString("clusters:\n")
	for name, sim := range map[string]*simulator.Simulator{"prod": good, "staging": bad} {
		host, port, _ := strings.Cut(sim.Nodes()[0], ":")
		fmt.Fprintf(&cfg, "  %s:\n    console: {url: %q, username: exporter, password_file: password}\n    nodes: [{host: %s, port: %s, name: core-1}]\n", name, sim.URL(), host, port)
	}
	file := writeFile(t, dir, "indexima.yml", cfg.String())
	code, stdout, stderr := runOnce(t, "--config.check.connect", "--config.file="+file)
	if code != 1 || len(lines(stderr)) != 1 || !strings.Contains(stderr, "cluster staging: console "+bad.URL()) || !strings.Contains(stderr, "bad credentials") {
		t.Errorf("status %d, stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "cluster prod: console "+good.URL()+`: logged in as "exporter"; 1 of 1 node(s) answered`) {
		t.Errorf("stdout:\n%s", stdout)
	}
}

// The flags refused with --demo, in one line each.
func TestConfigCheckWithDemo(t *testing.T) {
	for _, flag := range []string{"--config.check", "--config.check.connect"} {
		code, _, stderr := runOnce(t, flag, "--demo")
		if code != exitUsage || len(lines(stderr)) != 1 || !strings.Contains(stderr, "--demo needs none") {
			t.Errorf("%s --demo: status %d, stderr %q", flag, code, stderr)
		}
	}
}
