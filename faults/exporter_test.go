package faults

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/child"
	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// process is one running indexima_exporter.
type process struct {
	*child.Process
	t      *testing.T
	addr   string // 127.0.0.1:port
	scheme string // http or https
	client *http.Client
	stderr *testkit.SyncBuffer
	stdout *testkit.SyncBuffer
}

// startOpts tunes startExporter.
type startOpts struct {
	args []string    // extra flags
	tls  *tls.Config // client TLS for an https listener (--web.config.file)
	env  []string    // added to the exporter's environment
	user string      // basic auth of the readiness probe
	pass string
}

// startExporter runs the binary on a loopback port of its own and waits until
// it is ready. The exporter binds 127.0.0.1:0 and the test reads the port it
// got from its log: a port found free beforehand (listen on :0, close, hand
// it over) could be taken by a parallel test before the exporter binds it.
func startExporter(t *testing.T, o startOpts) *process {
	t.Helper()
	args := append([]string{"--web.listen-address=127.0.0.1:0"}, o.args...)
	p := &process{t: t, scheme: "http", stderr: &testkit.SyncBuffer{}, stdout: &testkit.SyncBuffer{}}
	tr := &http.Transport{DisableKeepAlives: false, MaxIdleConnsPerHost: 16}
	if o.tls != nil {
		p.scheme = "https"
		tr.TLSClientConfig = o.tls
	}
	p.client = &http.Client{Transport: tr, Timeout: 60 * time.Second}
	cmd := exec.Command(exporterBinary(t), args...)
	cmd.Stderr, cmd.Stdout = p.stderr, p.stdout
	if o.env != nil {
		cmd.Env = append(os.Environ(), o.env...)
	}
	var err error
	if p.Process, err = child.Start("the exporter", cmd); err != nil {
		t.Fatalf("starting the exporter: %v", err)
	}
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("exporter %s stderr:\n%s", p.addr, tail(p.stderr.String(), 60))
		}
	})
	// 60 s, as waitReady: a -race build on two cores starts slowly.
	addr, err := testkit.WaitListening(p.stderr.String, p.Done(), 60*time.Second)
	if err != nil {
		if p.Exited() {
			t.Fatalf("exporter not listening: %v (exit: %v)", err, p.Err())
		}
		t.Fatalf("exporter not listening: %v", err)
	}
	p.addr = addr
	if err := p.waitReady(o.user, o.pass); err != nil {
		t.Fatalf("exporter not ready: %v", err)
	}
	return p
}

// runUntilExit runs the binary for a start that must fail and returns its
// exit status and standard error; a process still running after 60 s (a
// -race build on two cores starts slowly) fails the test.
func runUntilExit(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exporterBinary(t), args...)
	stderr := &testkit.SyncBuffer{}
	cmd.Stderr = stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("still running after 60s, want it to end:\n%s", tail(stderr.String(), 20))
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), stderr.String()
	}
	if err != nil {
		t.Fatalf("running the exporter: %v", err)
	}
	return 0, stderr.String()
}

func tail(s string, lines int) string {
	l := strings.Split(s, "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n")
}

func (p *process) url(path string) string { return p.scheme + "://" + p.addr + path }

// waitReady polls /-/ready until it answers 200, the process exits, or 60 s
// pass (a -race build on two cores starts slowly).
func (p *process) waitReady(user, pass string) error {
	deadline := time.Now().Add(60 * time.Second)
	for i := 0; time.Now().Before(deadline) && i < 6000; i++ {
		if p.Exited() {
			return fmt.Errorf("exited: %v", p.Err())
		}
		req, _ := http.NewRequest(http.MethodGet, p.url("/-/ready"), nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := p.client.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body) // drained for reuse; the status decides
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return errors.New("not ready within 60s")
}

// stop ends the process with SIGTERM (a clean shutdown), then SIGKILL if it
// does not exit within 10 s.
func (p *process) stop() { p.Stop(10 * time.Second) }

// kill ends the process at once, as a crash would, and waits for its exit
// (a minute at most: a killed process exits at once, and a subtest may call
// this, where p.t could not fail).
func (p *process) kill() { p.Kill(time.Minute) }

// get fetches path and returns status and body.
func (p *process) get(path, user, pass string) (int, string, error) {
	return p.request(path, user, pass, 0)
}

// getWith GETs path announcing a scrape timeout (none when 0).
func (p *process) getWith(path string, scrapeTimeout time.Duration) (int, string, error) {
	return p.request(path, "", "", scrapeTimeout)
}

func (p *process) request(path, user, pass string, scrapeTimeout time.Duration) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, p.url(path), nil)
	if err != nil {
		return 0, "", err
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	if scrapeTimeout > 0 {
		req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", strconv.FormatFloat(scrapeTimeout.Seconds(), 'f', -1, 64))
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// metricsText scrapes /metrics and fails the test unless it answers 200.
func (p *process) metricsText() string {
	p.t.Helper()
	return p.metricsTextWith(0)
}

// metricsTextWith is metricsText announcing a scrape timeout as Prometheus
// does (X-Prometheus-Scrape-Timeout-Seconds; none when 0).
func (p *process) metricsTextWith(scrapeTimeout time.Duration) string {
	p.t.Helper()
	code, body, err := p.getWith("/metrics", scrapeTimeout)
	if err != nil || code != http.StatusOK {
		p.t.Fatalf("scrape: %d %v\n%s", code, err, tail(body, 20))
	}
	return body
}

// reloadHTTP posts /-/reload and returns the status and answer.
func (p *process) reloadHTTP() (int, string) {
	p.t.Helper()
	resp, err := p.client.Post(p.url("/-/reload"), "text/plain", nil)
	if err != nil {
		p.t.Fatalf("reload: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// sighup sends SIGHUP and waits until the exporter logs the outcome of the
// reload (a new "configuration reloaded" or "configuration refused" line).
func (p *process) sighup() string {
	p.t.Helper()
	before := strings.Count(p.stderr.String(), "configuration reloaded") +
		strings.Count(p.stderr.String(), "configuration refused")
	if err := p.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
		p.t.Fatalf("SIGHUP: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; time.Now().Before(deadline) && i < 3000; i++ {
		s := p.stderr.String()
		if strings.Count(s, "configuration reloaded")+strings.Count(s, "configuration refused") > before {
			lines := strings.Split(strings.TrimSpace(s), "\n")
			for j := len(lines) - 1; j >= 0; j-- {
				if strings.Contains(lines[j], "configuration re") {
					return lines[j]
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.t.Fatalf("no reload outcome logged after SIGHUP\n%s", tail(p.stderr.String(), 20))
	return ""
}
