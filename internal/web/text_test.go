package web

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"

	"github.com/indexima-exporter/indexima_exporter/config"
)

// /metrics goes through Options.Text for the text formats only, without a
// name[] filter; the rest, and a text scrape Text refuses (another one
// writing), goes through Gather and promhttp.
func TestMetricsTextOnlyForTheTextFormats(t *testing.T) {
	mf := &dto.MetricFamily{Name: proto.String("indexima_up"), Help: proto.String("Up."), Type: dto.MetricType_GAUGE.Enum(),
		Metric: []*dto.Metric{{Gauge: &dto.Gauge{Value: proto.Float64(1)}}}}
	var asked []expfmt.Format
	h, err := NewHandler(Options{
		MetricsPath: "/metrics",
		Registerer:  prometheus.NewRegistry(),
		Gather: func(context.Context) prometheus.TransactionalGatherer {
			return prometheus.ToTransactionalGatherer(prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
				return []*dto.MetricFamily{mf}, nil
			}))
		},
		Text: func(_ context.Context, f expfmt.Format) (TextAnswer, bool) {
			asked = append(asked, f)
			return TextAnswer{}, false // served by Gather: what is checked is who was asked
		},
		Probe:  http.NotFoundHandler(),
		Status: http.NotFoundHandler(),
		Events: http.NotFoundHandler(),
		SD:     http.NotFoundHandler(),
		Config: fixedConfig{},
		Logger: log.NewNopLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	get := func(path, accept string) string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || !strings.Contains(string(b), "indexima_up") {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		return resp.Header.Get("Content-Type")
	}
	for _, c := range []struct {
		path, accept string
		text         bool
	}{
		{"/metrics", "", true},
		{"/metrics", "application/openmetrics-text;version=1.0.0", true},
		{"/metrics", "text/plain;version=1.0.0;escaping=allow-utf-8", true},
		{"/metrics", "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited", false},
		{"/metrics?name[]=indexima_up", "", false},
	} {
		asked = nil
		ct := get(c.path, c.accept)
		if got := len(asked) == 1; got != c.text {
			t.Errorf("GET %s Accept %q (%s): Text asked %v, want %v", c.path, c.accept, ct, asked, c.text)
		}
		if c.text && string(asked[0]) != ct {
			t.Errorf("GET %s Accept %q: Text asked for %q, the answer (by promhttp) is %q", c.path, c.accept, asked[0], ct)
		}
	}
}

// fixedConfig is a configuration that is never reloaded.
type fixedConfig struct{}

func (fixedConfig) Config() *config.Config { return &config.Config{} }
func (fixedConfig) Reload() error          { return nil }
