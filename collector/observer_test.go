package collector

import (
	"testing"
	"time"

	promconfig "github.com/prometheus/common/config"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
	"github.com/indexima-exporter/indexima_exporter/poller"
)

// A console refusing the password, scraped five times within the login
// backoff: indexima_exporter_logins_total counts the logins the console
// received (one, refused), and the calls that failed on the backoff without
// a login are in indexima_exporter_logins_skipped_total, not counted as
// logins.
func TestLoginsCountTheLoginsMade(t *testing.T) {
	e := newEnv(t, simulator.Config{Users: map[string]string{"exporter": "another password"}}, 2, testOptions{})
	client, err := apiclient.New(apiclient.Config{URL: e.sim.URL(), Username: "exporter",
		Password: promconfig.Secret("s3cret"), Timeout: 5 * time.Second,
		// Long enough that no scrape of the test comes after it.
		LoginBackoff: time.Hour, MaxLoginBackoff: time.Hour,
		Observer: NewAPIObserver(e.reg)})
	if err != nil {
		t.Fatal(err)
	}
	c := poller.Cluster{Client: client}
	for _, k := range e.nodes {
		host, port := splitKey(t, k)
		c.Nodes = append(c.Nodes, poller.Node{Name: k, Target: apiclient.Node{Host: host, Port: port}})
	}
	e.p.SetClusters([]poller.Cluster{c})

	const scrapes = 5
	var m metrics
	for range scrapes {
		m = e.scrape(nil)
		e.clock.Advance(15 * time.Second) // the console's clock; the backoff runs on the real one
	}
	for _, n := range e.nodes {
		if up := m.value(t, "indexima_up", l("node", n)); up != 0 {
			t.Errorf("node %s up = %v with the password refused", n, up)
		}
	}
	st := e.sim.Stats()
	if st.LoginFailures != 1 || st.Logins != 0 || st.Requests["login"] != 1 {
		t.Fatalf("the console received %d login calls (%d refused, %d accepted), want one refused", st.Requests["login"], st.LoginFailures, st.Logins)
	}
	var sum float64
	for _, s := range m.series("indexima_exporter_logins_total", nil) {
		sum += s.value
	}
	failure := m.value(t, "indexima_exporter_logins_total", l("result", "failure"))
	errors := m.value(t, "indexima_exporter_logins_total", l("result", "error"))
	if sum != float64(st.Requests["login"]) || failure != 1 || errors != 0 {
		t.Errorf("logins_total: %v in all, failure %v, error %v; the console received %d login call(s), refused",
			sum, failure, errors, st.Requests["login"])
	}
	// Each later scrape polls both nodes, and each poll needs a login.
	if skipped := m.value(t, "indexima_exporter_logins_skipped_total", nil); skipped < (scrapes-1)*2 {
		t.Errorf("logins_skipped_total = %v after %d scrapes of 2 nodes within the backoff, want at least %d", skipped, scrapes, (scrapes-1)*2)
	}
}
