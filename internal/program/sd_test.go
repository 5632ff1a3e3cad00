package program

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/indexima-exporter/indexima_exporter/internal/discovery"
)

// getSD fetches /sd over HTTP and decodes it as Prometheus's HTTP service
// discovery does: status 200, Content-Type application/json, a JSON list
// of target groups.
func getSD(t *testing.T, r *running) []discovery.Group {
	t.Helper()
	resp, err := http.Get(r.base + "/sd")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("/sd: status %d, Content-Type %q, want 200 and application/json\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	var groups []discovery.Group
	if err := json.Unmarshal(body, &groups); err != nil || groups == nil {
		t.Fatalf("/sd is not a JSON list of target groups (%v):\n%s", err, body)
	}
	return groups
}

// sdTarget is a group of /sd reduced to what the shipped relabelling reads.
type sdTarget struct{ target, cluster, node string }

func sdTargets(t *testing.T, groups []discovery.Group) []sdTarget {
	t.Helper()
	var out []sdTarget
	for _, g := range groups {
		if len(g.Targets) != 1 {
			t.Errorf("group %+v: want one target per group (its labels are the node's)", g)
		}
		for k := range g.Labels {
			if !strings.HasPrefix(k, "__meta_indexima_") {
				t.Errorf("group %+v: label %q would become a target label; /probe series carry cluster and node already", g, k)
			}
		}
		for _, tg := range g.Targets {
			out = append(out, sdTarget{tg, g.Labels[discovery.LabelCluster], g.Labels[discovery.LabelNode]})
		}
	}
	return out
}

// probeOf is the /probe URL the shipped relabelling makes of a target:
// ?target=<address> and ?module=<cluster> when the cluster has a name.
func probeOf(tg sdTarget) string {
	q := url.Values{"target": {tg.target}}
	if tg.cluster != "" {
		q.Set("module", tg.cluster)
	}
	return "/probe?" + q.Encode()
}

// /sd lists every configured node of every cluster as a /probe target with
// its cluster and node, each target is accepted by /probe and answers for
// that node, and the list follows a reload that removes a node and adds one
// (a refused reload leaves it as it was).
func TestSDListsTheNodesAsProbeTargetsAndFollowsReloads(t *testing.T) {
	prod := newProbeCluster(t, "prod", "prod-a", "prod-b")
	staging := newProbeCluster(t, "staging", "stg-a", "stg-b")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "indexima.yml")
	clusterYAML := func(c *probeCluster, nodes ...string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "  %s:\n    console: {url: %q, username: monitor, password: %q}\n    nodes:\n", c.module, c.sim.URL(), c.module+"-secret")
		for _, name := range nodes {
			host, port, _ := strings.Cut(c.nodes[name], ":")
			fmt.Fprintf(&b, "      - {host: %s, port: %s, name: %s}\n", host, port, name)
		}
		return b.String()
	}
	writeFile(t, dir, "indexima.yml", "clusters:\n"+clusterYAML(prod, "core-1", "core-2")+clusterYAML(staging, "core-1"))
	r := start(t, "--config.file="+cfg)

	got := sdTargets(t, getSD(t, r))
	want := []sdTarget{
		{"prod-a:9999", "prod", "core-1"},
		{"prod-b:9999", "prod", "core-2"},
		{"stg-a:9999", "staging", "core-1"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("/sd targets\n got %v\nwant %v", got, want)
	}
	for _, tg := range got {
		code, body := r.get(probeOf(tg))
		if up := fmt.Sprintf(`indexima_up{cluster=%q,node=%q} 1`, tg.cluster, tg.node); code != http.StatusOK || !strings.Contains(body, up) {
			t.Errorf("GET %s: %d, want 200 with %s\n%s", probeOf(tg), code, up, body)
		}
	}

	// Reload: prod's core-2 removed, staging's core-2 added.
	writeFile(t, dir, "indexima.yml", "clusters:\n"+clusterYAML(prod, "core-1")+clusterYAML(staging, "core-1", "core-2"))
	if code, body := r.do(http.MethodPost, "/-/reload"); code != http.StatusOK {
		t.Fatalf("POST /-/reload: %d %s", code, body)
	}
	got = sdTargets(t, getSD(t, r))
	want = []sdTarget{
		{"prod-a:9999", "prod", "core-1"},
		{"stg-a:9999", "staging", "core-1"},
		{"stg-b:9999", "staging", "core-2"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("/sd targets after the reload\n got %v\nwant %v", got, want)
	}
	if code, body := r.get(probeOf(sdTarget{"prod-b:9999", "prod", "core-2"})); code != http.StatusBadRequest {
		t.Errorf("the removed node is still probed: %d %s", code, body)
	}
	if code, body := r.get(probeOf(want[2])); code != http.StatusOK || !strings.Contains(body, `indexima_up{cluster="staging",node="core-2"} 1`) {
		t.Errorf("the added node: %d\n%s", code, body)
	}

	// A refused reload leaves the list as it was.
	writeFile(t, dir, "indexima.yml", "clusters: [\n")
	if code, _ := r.do(http.MethodPost, "/-/reload"); code != http.StatusInternalServerError {
		t.Fatalf("POST /-/reload of a bad file: %d, want 500", code)
	}
	if got := sdTargets(t, getSD(t, r)); !reflect.DeepEqual(got, want) {
		t.Errorf("/sd after a refused reload\n got %v\nwant %v", got, want)
	}

	for _, path := range []string{"/sd", "/status"} {
		if code, _ := r.do(http.MethodPost, path); code != http.StatusMethodNotAllowed {
			t.Errorf("POST %s: %d, want 405", path, code)
		}
	}
	if _, body := r.get("/"); !strings.Contains(body, `href="/sd"`) {
		t.Error("the landing page does not link /sd")
	}
}

// With the single-cluster form there is no module: the targets carry no
// cluster label, and /probe takes them without ?module=.
func TestSDSingleClusterHasNoModule(t *testing.T) {
	c := newProbeCluster(t, "unused", "core-a", "core-b")
	dir := t.TempDir()
	var b strings.Builder
	fmt.Fprintf(&b, "console: {url: %q, username: monitor, password: %q}\nnodes:\n", c.sim.URL(), "unused-secret")
	for _, name := range []string{"core-1", "core-2"} {
		host, port, _ := strings.Cut(c.nodes[name], ":")
		fmt.Fprintf(&b, "  - {host: %s, port: %s}\n", host, port) // no name: host:port
	}
	writeFile(t, dir, "indexima.yml", b.String())
	r := start(t, "--config.file="+filepath.Join(dir, "indexima.yml"))
	groups := getSD(t, r)
	got := sdTargets(t, groups)
	want := []sdTarget{{"core-a:9999", "", "core-a:9999"}, {"core-b:9999", "", "core-b:9999"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("/sd targets\n got %v\nwant %v", got, want)
	}
	for _, g := range groups {
		if _, ok := g.Labels[discovery.LabelCluster]; ok {
			t.Errorf("group %+v has a cluster label; the single-cluster form has no module", g)
		}
	}
	for _, tg := range got {
		if code, body := r.get(probeOf(tg)); code != http.StatusOK || !strings.Contains(body, fmt.Sprintf(`indexima_up{node=%q} 1`, tg.node)) {
			t.Errorf("GET %s: %d\n%s", probeOf(tg), code, body)
		}
	}
}
