package collector

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
)

// apiObserver feeds the exporter's own API metrics. The label values come
// from apiclient's fixed sets (endpoints, status codes, login results), so
// cardinality is bounded. These are ordinary vectors: they describe the
// exporter, not the cluster, and never need to vanish.
type apiObserver struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	logins   *prometheus.CounterVec
	skipped  prometheus.Counter
}

// NewAPIObserver registers the exporter's own API metrics on reg
// (indexima_exporter_api_requests_total, ..._api_request_duration_seconds,
// indexima_exporter_logins_total, ..._logins_skipped_total) and returns the
// apiclient hook feeding them.
//
// logins_total counts the logins made, so that its sum is the number of
// login calls the console received. The calls that failed at once because a
// login backoff was in force made no login: they have a counter of their
// own, which a result label of logins_total would have added to that sum.
func NewAPIObserver(reg prometheus.Registerer) apiclient.Observer {
	o := &apiObserver{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: namespace + "_exporter_api_requests_total",
			Help: "Calls made by the exporter to the console API, by endpoint and HTTP status code (\"error\" when no status was received).",
		}, []string{"endpoint", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    namespace + "_exporter_api_request_duration_seconds",
			Help:    "Duration in seconds of the exporter's calls to the console API, by endpoint.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"endpoint"}),
		logins: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: namespace + "_exporter_logins_total",
			Help: "Logins of the exporter to the console, by result (success, failure: credentials refused, error: no usable answer).",
		}, []string{"result"}),
		skipped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: namespace + "_exporter_logins_skipped_total",
			Help: "Calls that needed a login while the backoff after a failed login was in force: no login was made, the call failed with that login's error.",
		}),
	}
	for _, r := range []string{apiclient.LoginSuccess, apiclient.LoginFailure, apiclient.LoginError} {
		o.logins.WithLabelValues(r)
	}
	reg.MustRegister(o.requests, o.duration, o.logins, o.skipped)
	return o
}

func (o *apiObserver) ObserveRequest(endpoint, code string, d time.Duration) {
	o.requests.WithLabelValues(endpoint, code).Inc()
	o.duration.WithLabelValues(endpoint).Observe(d.Seconds())
}

func (o *apiObserver) ObserveLogin(result string) { o.logins.WithLabelValues(result).Inc() }

func (o *apiObserver) ObserveLoginSkipped() { o.skipped.Inc() }
