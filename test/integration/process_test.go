package integration

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// TestMain removes the binary built for the tests.
func TestMain(m *testing.M) { testkit.Main(m) }

// binary builds the exporter once for every test of the package.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	return testkit.ExporterBinary(t)
}

// exporter is a running binary.
type exporter struct {
	t      *testing.T
	cmd    *exec.Cmd
	base   string
	stderr *testkit.SyncBuffer
	exited chan error
}

var listeningRE = regexp.MustCompile(`msg="Listening on" address=(127\.0\.0\.1:\d+)`)

// startExporter runs the binary on 127.0.0.1, port chosen by the kernel
// (read back from the log), and waits until /-/ready answers 200.
func startExporter(t *testing.T, args ...string) *exporter {
	t.Helper()
	return startBinary(t, binary(t), args...)
}

// startBinary is startExporter with another build of the exporter.
func startBinary(t *testing.T, bin string, args ...string) *exporter {
	t.Helper()
	e := &exporter{t: t, stderr: &testkit.SyncBuffer{}, exited: make(chan error, 1)}
	e.cmd = exec.Command(bin, append([]string{"--web.listen-address=127.0.0.1:0"}, args...)...)
	e.cmd.Stderr = e.stderr
	e.cmd.Stdout = e.stderr
	if err := e.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmd := e.cmd
	go func() { e.exited <- cmd.Wait() }()
	t.Cleanup(e.stop)

	deadline := time.Now().Add(30 * time.Second)
	for e.base == "" {
		if time.Now().After(deadline) {
			t.Fatalf("the exporter does not listen after 30s:\n%s", e.stderr)
		}
		select {
		case err := <-e.exited:
			t.Fatalf("the exporter ended (%v) before listening:\n%s", err, e.stderr)
		case <-time.After(20 * time.Millisecond):
		}
		if m := listeningRE.FindStringSubmatch(e.stderr.String()); m != nil {
			e.base = "http://" + m[1]
		}
	}
	for {
		if code, _ := e.get("/-/ready"); code == http.StatusOK {
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("/-/ready is not 200 after 30s:\n%s", e.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop sends SIGTERM and waits for a clean exit (bounded).
func (e *exporter) stop() {
	if e.cmd == nil || e.cmd.Process == nil {
		return
	}
	cmd := e.cmd
	e.cmd = nil
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return // already gone
	}
	select {
	case err := <-e.exited:
		if err != nil {
			e.t.Errorf("the exporter exited with %v after SIGTERM:\n%s", err, e.stderr)
		}
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill() // already failing; the kill only frees the test
		e.t.Errorf("the exporter did not stop within 20s of SIGTERM")
	}
	for _, bad := range []string{"panic", "goroutine ", "DATA RACE"} {
		if strings.Contains(e.stderr.String(), bad) {
			e.t.Errorf("the exporter's output holds %q:\n%s", bad, e.stderr)
		}
	}
}

func (e *exporter) signal(sig os.Signal) {
	e.t.Helper()
	if err := e.cmd.Process.Signal(sig); err != nil {
		e.t.Fatal(err)
	}
}

var httpClient = &http.Client{Timeout: 60 * time.Second}

func (e *exporter) get(path string) (int, string) {
	e.t.Helper()
	resp, err := httpClient.Get(e.base + path)
	if err != nil {
		e.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// scrape is one parsed /metrics answer.
type scrape struct {
	text     string
	families map[string]*dto.MetricFamily
}

func (e *exporter) scrape() *scrape {
	e.t.Helper()
	code, body := e.get("/metrics")
	if code != http.StatusOK {
		e.t.Fatalf("/metrics: status %d\n%s", code, body)
	}
	return parse(e.t, body)
}

// parse reads the text exposition format.
func parse(t *testing.T, body string) *scrape {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("the exposition does not parse: %v\n%s", err, body)
	}
	return &scrape{text: body, families: fams}
}

// find returns the metric of family name whose labels include want.
func (s *scrape) find(name string, want map[string]string) (*dto.Metric, bool) {
	f := s.families[name]
	if f == nil {
		return nil, false
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, lp := range m.GetLabel() {
			have[lp.GetName()] = lp.GetValue()
		}
		if len(have) != len(want) {
			continue
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		return m, true
	}
	return nil, false
}

// value is the value of a counter, gauge or untyped sample; ok false if absent.
func (s *scrape) value(name string, labels map[string]string) (float64, bool) {
	m, ok := s.find(name, labels)
	if !ok {
		return 0, false
	}
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue(), true
	case m.Gauge != nil:
		return m.GetGauge().GetValue(), true
	case m.Untyped != nil:
		return m.GetUntyped().GetValue(), true
	}
	return 0, false
}

// byLabel maps the value of label to the sample value, over the samples of
// name whose other labels are node=node.
func (s *scrape) byLabel(name, node, label string) map[string]float64 {
	out := map[string]float64{}
	f := s.families[name]
	if f == nil {
		return out
	}
	for _, m := range f.GetMetric() {
		var n, l string
		for _, lp := range m.GetLabel() {
			switch lp.GetName() {
			case "node":
				n = lp.GetValue()
			case label:
				l = lp.GetValue()
			}
		}
		if n != node {
			continue
		}
		switch {
		case m.Counter != nil:
			out[l] = m.GetCounter().GetValue()
		case m.Gauge != nil:
			out[l] = m.GetGauge().GetValue()
		case m.Histogram != nil:
			out[l] = float64(m.GetHistogram().GetSampleCount())
		}
	}
	return out
}

// hasNode tells whether any series carries node=node.
func (s *scrape) hasNode(node string) bool {
	for _, f := range s.families {
		for _, m := range f.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "node" && lp.GetValue() == node {
					return true
				}
			}
		}
	}
	return false
}
