package prometheusrules

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/indexima-exporter/indexima_exporter/poller"
)

// TestPrometheusConfigStatesTheDefaultConcurrency: prometheus.yml explains
// its scrape_timeout with the number of nodes the exporter polls at once by
// default; that number is the exporter's own default (it once said 32 when
// the default was 1024).
func TestPrometheusConfigStatesTheDefaultConcurrency(t *testing.T) {
	data, err := os.ReadFile("prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	stated := regexp.MustCompile(`at once[\s#]*\((?:--scrape\.concurrency,[\s#]*)?(\d+) by default\)`).FindAllSubmatch(data, -1)
	if len(stated) == 0 {
		t.Fatal("prometheus.yml no longer says how many nodes are polled at once by default (`at once (--scrape.concurrency, N by default)`): update this test with the comment")
	}
	for _, m := range stated {
		if n, _ := strconv.Atoi(string(m[1])); n != poller.DefaultConcurrency {
			t.Errorf("prometheus.yml says %d nodes are polled at once by default; --scrape.concurrency defaults to %d", n, poller.DefaultConcurrency)
		}
	}
}
