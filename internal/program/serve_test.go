package program

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// running is the program started in-process on a free loopback port.
type running struct {
	t      *testing.T
	base   string
	stderr *testkit.SyncBuffer
	hup    chan os.Signal
	cancel context.CancelFunc
	done   chan int
}

var listeningRE = regexp.MustCompile(`msg="Listening on" address=(127\.0\.0\.1:\d+)`)

func start(t *testing.T, args ...string) *running {
	t.Helper()
	return startWithStdout(t, io.Discard, args...)
}

// startWithStdout is start with the program's standard output given.
func startWithStdout(t *testing.T, stdout io.Writer, args ...string) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{t: t, stderr: &testkit.SyncBuffer{}, hup: make(chan os.Signal, 1), cancel: cancel, done: make(chan int, 1)}
	args = append([]string{"--web.listen-address=127.0.0.1:0"}, args...)
	go func() { r.done <- run(ctx, args, stdout, r.stderr, r.hup) }()
	t.Cleanup(func() { r.stop() })
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if m := listeningRE.FindStringSubmatch(r.stderr.String()); m != nil {
			r.base = "http://" + m[1]
			return r
		}
		select {
		case code := <-r.done:
			t.Fatalf("the program ended with status %d before listening:\n%s", code, r.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("the program does not listen after 20s:\n%s", r.stderr)
	return nil
}

// stop ends the program as SIGTERM does and checks it exits cleanly.
func (r *running) stop() {
	if r.cancel == nil {
		return
	}
	r.cancel()
	r.cancel = nil
	select {
	case code := <-r.done:
		if code != 0 {
			r.t.Errorf("exit status %d after shutdown:\n%s", code, r.stderr)
		}
	case <-time.After(20 * time.Second):
		r.t.Errorf("the program does not stop within 20s")
	}
}

func (r *running) get(path string) (int, string) {
	r.t.Helper()
	return r.do(http.MethodGet, path)
}

func (r *running) do(method, path string) (int, string) {
	r.t.Helper()
	req, err := http.NewRequest(method, r.base+path, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		r.t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// waitFor polls path until cond holds on its body, with a deadline.
func (r *running) waitFor(path string, cond func(string) bool, what string) {
	r.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	body := ""
	for time.Now().Before(deadline) {
		_, body = r.get(path)
		if cond(body) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.t.Fatalf("%s: not seen on %s within 20s; last body:\n%s", what, path, body)
}

func TestServesEndpointsAndReloads(t *testing.T) {
	const secret = "Pa55-word-for-test"
	sim := simulator.New(simulator.Config{
		Users: map[string]string{"monitor": secret},
		Nodes: []simulator.NodeConfig{{Host: "core-a"}, {Host: "core-b"}, {Host: "core-c"}},
	})
	if err := sim.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer sim.Close()

	dir := t.TempDir()
	writeFile(t, dir, "password", secret+"\n")
	path := filepath.Join(dir, "indexima.yml")
	config := func(nodes string) string {
		return "console: {url: '" + sim.URL() + "', username: monitor, password_file: password, timeout: 5s}\nnodes: " + nodes + "\n"
	}
	writeFile(t, dir, "indexima.yml", config("[{host: core-a, name: a}, {host: core-b, name: b}]"))

	r := start(t, "--config.file="+path)

	for path, want := range map[string]string{"/-/healthy": "Healthy", "/-/ready": "Ready", "/": "/metrics"} {
		if code, body := r.get(path); code != 200 || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d %q, want 200 with %q", path, code, body, want)
		}
	}
	for _, link := range []string{"/-/healthy", "/-/ready", "/config"} {
		if _, body := r.get("/"); !strings.Contains(body, link) {
			t.Errorf("the landing page does not link %s", link)
		}
	}
	if code, _ := r.get("/nothing-here"); code != 404 {
		t.Errorf("GET /nothing-here: %d, want 404", code)
	}
	code, body := r.get("/metrics")
	for _, want := range []string{"indexima_exporter_build_info{", "go_goroutines ", "process_cpu_seconds_total ",
		"indexima_exporter_config_last_reload_successful 1", "promhttp_metric_handler_requests_total"} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	code, body = r.get("/config")
	// The password came from a file: /config names the file (as the file
	// did), never the password.
	if code != 200 || !strings.Contains(body, "name: b") || !strings.Contains(body, "password_file: ") || strings.Contains(body, secret) {
		t.Errorf("/config: %d\n%s", code, body)
	}

	// /probe: one node, by name or host:port.
	for target, want := range map[string]string{"a": `node="a"`, "core-b:9999": `node="b"`} {
		code, body := r.get("/probe?target=" + target)
		if code != 200 || !strings.Contains(body, "indexima_up{"+want+"} 1") {
			t.Errorf("/probe?target=%s: %d\n%s", target, code, body)
		}
		for _, other := range []string{`node="a"`, `node="b"`} {
			if other != want && strings.Contains(body, other) {
				t.Errorf("/probe?target=%s holds series of %s", target, other)
			}
		}
	}
	for _, bad := range []string{"/probe", "/probe?target=zz", "/probe?target=a&module=prod"} {
		if code, body := r.get(bad); code != http.StatusBadRequest {
			t.Errorf("GET %s: %d %q, want 400", bad, code, body)
		}
	}

	// /-/reload wants POST.
	if code, _ := r.get("/-/reload"); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /-/reload: %d, want 405", code)
	}

	// A good file: node b removed, node c added.
	writeFile(t, dir, "indexima.yml", config("[{host: core-a, name: a}, {host: core-c, name: c}]"))
	if code, body := r.do(http.MethodPost, "/-/reload"); code != 200 || !strings.Contains(body, "1 cluster(s), 2 node(s)") {
		t.Errorf("POST /-/reload of a good file: %d %q", code, body)
	}
	if _, body := r.get("/config"); !strings.Contains(body, "name: c") || strings.Contains(body, "name: b") {
		t.Errorf("/config after reload:\n%s", body)
	}

	// A bad file: refused with the problem, the old configuration stays.
	writeFile(t, dir, "indexima.yml", config("[{host: core-a, name: a}]")+"password: "+secret+"\n")
	code, body = r.do(http.MethodPost, "/-/reload")
	if code != 500 || !strings.Contains(body, `unknown key "password"`) || strings.Contains(body, secret) {
		t.Errorf("POST /-/reload of a bad file: %d %q", code, body)
	}
	if _, body := r.get("/config"); !strings.Contains(body, "name: c") {
		t.Errorf("the old configuration is gone after a refused reload:\n%s", body)
	}
	if _, body := r.get("/metrics"); !strings.Contains(body, "indexima_exporter_config_last_reload_successful 0") {
		t.Error("last_reload_successful is not 0 after a refused reload")
	}
	if _, body := r.get("/-/ready"); !strings.Contains(body, "Ready") {
		t.Error("not ready after a refused reload; the old configuration still runs")
	}

	// SIGHUP reloads too.
	writeFile(t, dir, "indexima.yml", config("[{host: core-b, name: b2}]"))
	r.hup <- os.Interrupt // any value: the channel stands for SIGHUP
	r.waitFor("/config", func(b string) bool { return strings.Contains(b, "name: b2") }, "the file reloaded on SIGHUP")

	r.stop()
	if strings.Contains(r.stderr.String(), secret) {
		t.Errorf("the password is in the logs:\n%s", r.stderr)
	}
}

func TestDemoModeServesTheSimulatedCluster(t *testing.T) {
	r := start(t, "--demo")
	if !regexp.MustCompile(`msg="demo: simulated console listening" url=http://127\.0\.0\.1:\d+`).MatchString(r.stderr.String()) {
		t.Errorf("the log does not say where the simulated console listens:\n%s", r.stderr)
	}
	if code, body := r.get("/-/ready"); code != 200 {
		t.Errorf("/-/ready: %d %q", code, body)
	}
	r.waitFor("/metrics", func(b string) bool {
		for i := 1; i <= 4; i++ {
			if !strings.Contains(b, `node="core-`+string(rune('0'+i))+`"`) {
				return false
			}
		}
		return true
	}, "series of the four demo nodes")
	if code, _ := r.do(http.MethodPost, "/-/reload"); code != 200 {
		t.Errorf("POST /-/reload in demo mode: %d, want 200 (the demo configuration is re-applied)", code)
	}
}
