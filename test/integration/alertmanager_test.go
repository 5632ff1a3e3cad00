package integration

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// readmeCommand is the README's command line of the Prometheus section that
// starts with name: its words, the trailing comment left out.
func readmeCommand(t *testing.T, name string) []string {
	t.Helper()
	var found []string
	for _, line := range strings.Split(section(t, readme(t), "## Prometheus"), "\n") {
		cmd, _, _ := strings.Cut(line, "   #")
		words := strings.Fields(cmd)
		if len(words) > 0 && words[0] == name {
			if found != nil {
				t.Fatalf("the README's Prometheus section starts %s twice", name)
			}
			found = words
		}
	}
	if found == nil {
		t.Fatalf("the README's Prometheus section gives no command line starting with %s", name)
	}
	return found
}

// startReadmeCommand runs the README's command line from the repository's
// root, its data in a directory of the test and listening on a free
// loopback port (the README's ports are the defaults, which a parallel test
// or a running service may hold), and returns its address once it is ready.
func startReadmeCommand(t *testing.T, bin string, words []string, storageFlag string) string {
	t.Helper()
	args := []string{"--web.listen-address=127.0.0.1:0"}
	for _, w := range words[1:] {
		if strings.HasPrefix(w, "--web.listen-address=") {
			t.Fatalf("%s: the README sets the listen address; this test expects the default", words[0])
		}
		if strings.HasPrefix(w, storageFlag+"=") {
			w = storageFlag + "=" + t.TempDir()
		}
		args = append(args, w)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = filepath.Join("..", "..")
	out := &testkit.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }() // killed by cancel: its status says nothing
	t.Cleanup(func() {
		cancel()
		<-done
		if t.Failed() {
			t.Logf("%s:\n%s", words[0], out)
		}
	})
	addr, err := testkit.WaitListening(out.String, done, 30*time.Second)
	if err != nil {
		t.Fatalf("%s %s: %v", words[0], strings.Join(args, " "), err)
	}
	testkit.WaitFor(t, words[0]+" ready", func() bool {
		resp, err := http.Get("http://" + addr + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return addr
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v\n%s", url, resp.StatusCode, err, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v\n%s", url, err, b)
	}
}

// TestReadmeStartsAlertmanagerAndPrometheus runs the README's command lines
// of Debian's Alertmanager and Prometheus as a user would, from the root of
// a clone: Alertmanager starts alone with the shipped configuration, and
// Prometheus with its configuration, which loads the rules and sends the
// alerts to where that Alertmanager listens by default (localhost:9093).
func TestReadmeStartsAlertmanagerAndPrometheus(t *testing.T) {
	am := readmeCommand(t, "prometheus-alertmanager")
	addr := startReadmeCommand(t, testkit.Tool(t, "prometheus-alertmanager", "Debian package prometheus-alertmanager"), am, "--storage.path")
	var status struct {
		Config struct {
			Original string `json:"original"`
		} `json:"config"`
		Cluster struct {
			Status string `json:"status"`
		} `json:"cluster"`
	}
	getJSON(t, "http://"+addr+"/api/v2/status", &status)
	if !strings.Contains(status.Config.Original, "receiver: default") || status.Cluster.Status != "disabled" {
		t.Errorf("Alertmanager runs %q with cluster %q: want the shipped configuration, alone", status.Config.Original, status.Cluster.Status)
	}

	prom := readmeCommand(t, "prometheus")
	paddr := startReadmeCommand(t, testkit.Tool(t, "prometheus", "Debian package prometheus"), prom, "--storage.tsdb.path")
	var rules struct {
		Data struct {
			Groups []struct {
				Rules []any `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	getJSON(t, "http://"+paddr+"/api/v1/rules", &rules)
	n := 0
	for _, g := range rules.Data.Groups {
		n += len(g.Rules)
	}
	if n < 10 {
		t.Errorf("Prometheus started as the README says loaded %d rules, want the shipped alerts", n)
	}
	var ams struct {
		Data struct {
			Active []struct {
				URL string `json:"url"`
			} `json:"activeAlertmanagers"`
		} `json:"data"`
	}
	testkit.WaitFor(t, "Prometheus's Alertmanager discovered", func() bool {
		getJSON(t, "http://"+paddr+"/api/v1/alertmanagers", &ams)
		return len(ams.Data.Active) > 0
	})
	for _, a := range ams.Data.Active {
		if a.URL != "http://localhost:9093/api/v2/alerts" {
			t.Errorf("Prometheus sends its alerts to %s, not to the README's Alertmanager (localhost:9093, its default port)", a.URL)
		}
	}
}
