package program

import (
	"fmt"
	"html"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/indexima-exporter/indexima_exporter/internal/discovery"
)

var hrefRE = regexp.MustCompile(`href="([^"]*)"`)

// hrefs are the links of a page, unescaped.
func hrefs(body string) []string {
	var out []string
	for _, m := range hrefRE.FindAllStringSubmatch(body, -1) {
		out = append(out, html.UnescapeString(m[1]))
	}
	return out
}

// With --web.external-url, every link the exporter gives out starts with
// it: the landing page's (its Probe link a working /probe of the first
// configured node), /sd's link to each node's card on /status, and
// indexima_exporter_web_external_url_info, from which the alerts' status_url
// is made (deploy/prometheus/tests/external-url.test.yml). The status page's
// own links are relative, so they hold under any prefix.
func TestExternalURLStartsEveryLink(t *testing.T) {
	const external = "http://localhost:9897"
	prod := newProbeCluster(t, "prod", "prod-a", "prod-b")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "indexima.yml")
	writeFile(t, dir, "indexima.yml", "clusters:\n"+prod.yaml(dir))
	// A trailing slash, as a user may write it, is not doubled.
	r := start(t, "--config.file="+cfg, "--web.external-url="+external+"/")

	code, body := r.get("/")
	links := hrefs(body)
	if code != http.StatusOK || len(links) < 8 {
		t.Fatalf("GET /: %d, %d links, want 200 and the 8 endpoints\n%s", code, len(links), body)
	}
	probe := ""
	for _, l := range links {
		if !strings.HasPrefix(l, external+"/") || strings.HasPrefix(l, external+"//") {
			t.Errorf("landing page link %q does not start with %s/", l, external)
		}
		if strings.HasPrefix(l, external+"/probe") {
			probe = strings.TrimPrefix(l, external)
		}
	}
	// The Probe link works: the first node of the configuration.
	if want := "/probe?target=prod-a%3A9999&module=prod"; probe != want {
		t.Errorf("landing page Probe link %q, want %q", probe, want)
	}
	if code, body := r.get(probe); code != http.StatusOK || !strings.Contains(body, `indexima_up{cluster="prod",node="core-1"} 1`) {
		t.Errorf("GET %s: %d, want 200 with node core-1 up\n%s", probe, code, body)
	}

	_, status := r.get("/status")
	for _, g := range getSD(t, r) {
		node := g.Labels[discovery.LabelNode]
		anchor := "node-prod-" + node
		if got, want := g.Labels[discovery.LabelStatusURL], external+"/status#"+anchor; got != want {
			t.Errorf("/sd %v: %s = %q, want %q", g.Targets, discovery.LabelStatusURL, got, want)
		}
		if !strings.Contains(status, fmt.Sprintf(`id="%s"`, anchor)) {
			t.Errorf("/status has no card %q for /sd's link to point at", anchor)
		}
	}
	for _, l := range hrefs(status) {
		if strings.HasPrefix(l, "/") || strings.Contains(l, "://") {
			t.Errorf("/status link %q is not relative: it breaks under a proxy's prefix", l)
		}
	}

	_, metrics := r.get("/metrics")
	if want := `indexima_exporter_web_external_url_info{url="` + external + `"} 1`; !strings.Contains(metrics, want) {
		t.Errorf("/metrics lacks %s", want)
	}

	// Without it: the landing page's links are paths, /sd's start with the
	// address the request came to, no info series.
	plain := start(t, "--config.file="+cfg)
	_, body = plain.get("/")
	for _, l := range hrefs(body) {
		if !strings.HasPrefix(l, "/") || strings.HasPrefix(l, "//") {
			t.Errorf("without --web.external-url, landing page link %q is not a path", l)
		}
	}
	for _, g := range getSD(t, plain) {
		if got, want := g.Labels[discovery.LabelStatusURL], plain.base+"/status#node-prod-"+g.Labels[discovery.LabelNode]; got != want {
			t.Errorf("without --web.external-url, /sd %v: %s = %q, want %q", g.Targets, discovery.LabelStatusURL, got, want)
		}
	}
	if _, metrics := plain.get("/metrics"); strings.Contains(metrics, "indexima_exporter_web_external_url_info") {
		t.Error("without --web.external-url, /metrics has indexima_exporter_web_external_url_info")
	}
}

// A --web.external-url that is no http(s) URL with a host, or that holds a
// password (shown on the landing page and in /metrics), ends the program
// with one line naming the flag, and never the password.
func TestExternalURLRefused(t *testing.T) {
	for _, bad := range []string{"localhost:9897", "ftp://host/", "http://", "http://host/?x=1", "/indexima", "http://admin:s3cret@host:9897"} {
		code, _, stderr := runOnce(t, "--demo", "--web.external-url="+bad)
		if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "--web.external-url") {
			t.Errorf("--web.external-url=%s: status %d, stderr %q; want %d and one line naming the flag", bad, code, stderr, exitUsage)
		}
		if strings.Contains(stderr, "s3cret") {
			t.Errorf("--web.external-url=%s: the refusal shows the password: %q", bad, stderr)
		}
	}
}
