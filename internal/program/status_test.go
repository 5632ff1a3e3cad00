package program

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/internal/statuspage"
)

// statusNodeText is one node's card of /status as text (tags removed,
// entities decoded, blanks collapsed), and its data-state.
type statusNodeText struct {
	state, text string
}

var (
	articleRE = regexp.MustCompile(`(?s)<article class="node [a-z]+" id="[^"]*" data-node="([^"]*)" data-state="([a-z]+)">(.*?)</article>`)
	sectionRE = regexp.MustCompile(`(?s)<section class="cluster" data-cluster="([^"]*)"[^>]*>(.*?)</section>`)
	tagRE     = regexp.MustCompile(`<[^>]*>`)
)

// pageText is an HTML fragment's text, as a reader sees it.
func pageText(fragment string) string {
	return strings.Join(strings.Fields(html.UnescapeString(tagRE.ReplaceAllString(fragment, " "))), " ")
}

// statusNodes parses /status into cluster -> node -> card.
func statusNodes(t *testing.T, page string) map[string]map[string]statusNodeText {
	t.Helper()
	out := map[string]map[string]statusNodeText{}
	for _, s := range sectionRE.FindAllStringSubmatch(page, -1) {
		nodes := map[string]statusNodeText{}
		for _, a := range articleRE.FindAllStringSubmatch(s[2], -1) {
			nodes[html.UnescapeString(a[1])] = statusNodeText{state: a[2], text: pageText(a[3])}
		}
		out[html.UnescapeString(s[1])] = nodes
	}
	return out
}

// field is the value of a "Name value" pair of a card: the text after name
// up to the next field name.
func field(card, name string) string {
	_, after, ok := strings.Cut(card, name+" ")
	if !ok {
		return ""
	}
	for _, next := range []string{"Duration ", "Console calls ", "Outcome ", "Counted ", "Reported ", "Count semantics ",
		"Clock lag ", "Cursor ", "Events running ", "Cluster state ", "Failed polls ", "Last "} {
		if i := strings.Index(after, next); i >= 0 && next != name+" " {
			after = after[:i]
		}
	}
	return strings.TrimSpace(after)
}

// sumSeries sums the samples of a family for one (cluster, node) in an
// exposition.
func sumSeries(t *testing.T, exposition, family, cluster, node string) float64 {
	t.Helper()
	f := parseProbe(t, exposition)[family]
	if f == nil {
		t.Fatalf("no %s in the exposition", family)
	}
	var sum float64
	for _, m := range f.Metric {
		c, _ := labelOf(m, "cluster")
		n, _ := labelOf(m, "node")
		if c != cluster || n != node {
			continue
		}
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		}
	}
	return sum
}

// /status over HTTP against two simulated consoles: before any scrape
// every node waits for its first poll; after three scrapes it shows each
// node up or down with its last poll (calls, outcome with the typed error),
// the same counted and reported numbers as /metrics, the count semantics,
// clock lag, cursor and running events, and the last polls. No password
// appears on it.
func TestStatusPageShowsEachNodeFromThePolls(t *testing.T) {
	prod := newProbeCluster(t, "prod", "prod-a", "prod-b")
	staging := newProbeCluster(t, "staging", "stg-a")
	dir := t.TempDir()
	writeFile(t, dir, "indexima.yml", "clusters:\n"+prod.yaml(dir)+staging.yaml(dir))
	r := start(t, "--config.file="+filepath.Join(dir, "indexima.yml"))

	code, page := r.get("/status")
	if code != http.StatusOK {
		t.Fatalf("/status: %d\n%s", code, page)
	}
	nodes := statusNodes(t, page)
	if len(nodes) != 2 || len(nodes["prod"]) != 2 || len(nodes["staging"]) != 1 {
		t.Fatalf("/status before any scrape shows %v; want prod (2 nodes) and staging (1)", nodes)
	}
	for c, ns := range nodes {
		for n, card := range ns {
			if card.state != "waiting" || !strings.Contains(card.text, "not polled yet") {
				t.Errorf("%s/%s before any scrape: %s %q", c, n, card.state, card.text)
			}
		}
	}
	if !strings.Contains(pageText(page), "0 of 3 nodes up") {
		t.Errorf("summary before any scrape: %q", pageText(page))
	}

	// First contact, events on prod/core-1 (one still running), then prod's
	// core-2 refused by the console.
	r.get("/metrics")
	prodA := prod.nodes["core-1"]
	for i := 0; i < 3; i++ {
		prod.sim.Append(prodA, simulator.Event{Type: simulator.SaveMetadata, Duration: 5, Comment: "2"})
	}
	prod.sim.Append(prodA, simulator.Event{Type: simulator.TableLoaded, Duration: 600000, Comment: "sales.orders"})
	prod.clock.Advance(10 * time.Second)
	staging.clock.Advance(10 * time.Second)
	r.get("/metrics")
	prod.sim.SetNodeFault(prod.nodes["core-2"], simulator.Fault{Status: http.StatusBadGateway})
	prod.clock.Advance(10 * time.Second)
	staging.clock.Advance(10 * time.Second)
	_, metrics := r.get("/metrics")
	code, page = r.get("/status")
	if code != http.StatusOK {
		t.Fatalf("/status: %d", code)
	}
	for _, secret := range []string{"prod-secret", "staging-secret"} {
		if strings.Contains(page, secret) {
			t.Errorf("the password %q is on /status", secret)
		}
	}
	if !strings.Contains(pageText(page), "2 of 3 nodes up") {
		t.Errorf("summary: %q", pageText(page))
	}
	nodes = statusNodes(t, page)
	for _, n := range []struct {
		cluster, node, state string
		want                 []string // in the card's text
	}{
		{"prod", "core-1", "up", []string{"Outcome ok", "Count semantics ", "Clock lag ", "Cursor ", "Last 3 polls", "first contact"}},
		{"prod", "core-2", "down", []string{"Outcome node unreachable: endpoint", "status 502", "Failed polls node_unreachable 1", "Last 3 polls"}},
		{"staging", "core-1", "up", []string{"Outcome ok", "Events running none", "Last 3 polls"}},
	} {
		card, ok := nodes[n.cluster][n.node]
		if !ok {
			t.Errorf("%s/%s not on /status", n.cluster, n.node)
			continue
		}
		if card.state != n.state || !strings.Contains(card.text, strings.ToUpper(n.state)) && !strings.Contains(card.text, " "+n.state+" ") {
			t.Errorf("%s/%s: state %q, want %q\n%s", n.cluster, n.node, card.state, n.state, card.text)
		}
		for _, w := range n.want {
			if !strings.Contains(card.text, w) {
				t.Errorf("%s/%s: %q not in the card:\n%s", n.cluster, n.node, w, card.text)
			}
		}
		// The numbers of /metrics.
		counted := sumSeries(t, metrics, "indexima_events_total", n.cluster, n.node)
		reported := sumSeries(t, metrics, "indexima_events_reported_total", n.cluster, n.node)
		if got := field(card.text, "Counted"); !strings.HasPrefix(got, fmt.Sprintf("%g since first contact", counted)) {
			t.Errorf("%s/%s: Counted %q, /metrics says %g", n.cluster, n.node, got, counted)
		}
		if got := field(card.text, "Reported"); got != fmt.Sprint(reported) {
			t.Errorf("%s/%s: Reported %q, /metrics says %g", n.cluster, n.node, got, reported)
		}
		if calls := field(card.text, "Console calls"); calls == "" || calls == "0" && n.state == "up" {
			t.Errorf("%s/%s: Console calls %q", n.cluster, n.node, calls)
		}
	}
	if got := field(nodes["prod"]["core-1"].text, "Counted"); !strings.HasPrefix(got, "3 ") {
		t.Errorf("prod/core-1 counted %q, want the 3 completed events", got)
	}
	if got := field(nodes["prod"]["core-1"].text, "Events running"); got != "1: TABLE_LOADED 1" {
		t.Errorf("prod/core-1 running %q, want the table still loading", got)
	}

	// At most RecentPolls polls are listed.
	for i := 0; i < 12; i++ {
		r.get("/metrics")
	}
	_, page = r.get("/status")
	if card := statusNodes(t, page)["staging"]["core-1"]; !strings.Contains(card.text, "Last 10 polls") || strings.Count(card.text, " ok ")+strings.Count(card.text, " ok,") < 10 {
		t.Errorf("after 15 scrapes: %s", card.text)
	}
	if _, body := r.get("/"); !strings.Contains(body, `href="/status"`) {
		t.Error("the landing page does not link /status")
	}
}

// A console that echoes the password in an error body: the typed error's
// excerpt holds it (escaped in JSON, then quoted), and /status shows
// <secret> in its place, whatever characters the password has.
func TestStatusPageNeverShowsThePassword(t *testing.T) {
	const password = `Echo-"Pa55\wörd<42>`
	msg, _ := json.Marshal("user monitor with password " + password + " may not read this node")
	r := startOnRefusingConsole(t, password, fmt.Sprintf(`{"message": %s}`, msg))
	_, page := r.get("/status")
	card := statusNodes(t, page)[""]["a"]
	if card.state != "down" || !strings.Contains(card.text, "<secret>") {
		t.Errorf("the echoed error is not shown with the password cut out:\n%s", card.text)
	}
	for _, where := range []struct{ name, text string }{{"/status", page}, {"/status text", pageText(page)}} {
		for _, form := range append(statuspage.SecretForms(password), "Pa55") {
			if strings.Contains(where.text, form) {
				t.Errorf("the password (as %q) is on %s:\n%s", form, where.name, card.text)
			}
		}
	}
}

// A console's error body is shown on /status as the console sent it: its
// quotes and backslashes once (the excerpt is not quoted again), its < and
// & escaped for HTML only, so that the browser shows them and makes no tag.
func TestStatusPageShowsTheConsoleErrorBodyOnce(t *testing.T) {
	const body = `{"message": "node \"core-a\" <b>refused</b> C:\\data & more"}`
	r := startOnRefusingConsole(t, "pw", body)
	_, page := r.get("/status")
	card := statusNodes(t, page)[""]["a"]
	if card.state != "down" {
		t.Fatalf("the node is %s, want down:\n%s", card.state, card.text)
	}
	outcome := field(card.text, "Outcome")
	if !strings.Contains(outcome, body) {
		t.Errorf("the card does not show the body as the console sent it\n got %s\nwant it to hold %s", outcome, body)
	}
	if strings.Contains(card.text, `\"message\"`) || strings.Contains(card.text, `\\\\`) {
		t.Errorf("the body is escaped twice on /status:\n%s", outcome)
	}
	if strings.Contains(page, "<b>") {
		t.Error("the body's <b> reached the page as a tag")
	}
}

// startOnRefusingConsole starts the program on a console of one node, a,
// whose password is password: after a first scrape that succeeds, the
// console refuses every node call (403) with body, and a second scrape has
// met that refusal.
func startOnRefusingConsole(t *testing.T, password, body string) *running {
	t.Helper()
	sim := simulator.New(simulator.Config{Users: map[string]string{"monitor": password},
		Nodes: []simulator.NodeConfig{{Host: "core-a"}}})
	var refuse atomic.Bool
	console := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refuse.Load() && strings.HasPrefix(r.URL.Path, "/api/monitor/") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, body)
			return
		}
		sim.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(func() { console.Close(); sim.Close() })
	dir := t.TempDir()
	writeFile(t, dir, "password", password+"\n")
	writeFile(t, dir, "indexima.yml", fmt.Sprintf("console: {url: %q, username: monitor, password_file: password}\nnodes: [{host: core-a, name: a}]\n", console.URL))
	r := start(t, "--config.file="+filepath.Join(dir, "indexima.yml"))
	r.get("/metrics")
	refuse.Store(true)
	r.get("/metrics")
	return r
}
