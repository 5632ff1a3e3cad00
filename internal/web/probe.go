package web

import (
	"fmt"
	"net/http"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/indexima-exporter/indexima_exporter/collector"
)

// ProbeHandler serves /probe?target=<node>&module=<cluster>: the metrics of
// one configured node, in a registry of its own built for the request, so
// nothing of one probe leaks into another. target is the node's name or
// host:port; module the cluster's name (absent with the single-cluster
// form). Polls are shared with /metrics, so both can be scraped safely.
//
// afterProbe (nil: none) runs within the collection, before the answer goes
// out: it saves the probed node's state.
func ProbeHandler(exp *collector.Exporter, afterProbe func(cluster, target string), offset time.Duration, logger log.Logger) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		target, module := q.Get("target"), q.Get("module")
		if target == "" {
			http.Error(w, "The target parameter is missing: /probe?target=<node name or host:port>&module=<cluster>.", http.StatusBadRequest)
			return
		}
		ctx, cancel := scrapeContext(r, offset)
		defer cancel()
		c, ok := exp.NodeCollector(ctx, module, target)
		if !ok {
			http.Error(w, fmt.Sprintf("Unknown target %q in module %q: probe only nodes of the configuration (see /config).", target, module), http.StatusBadRequest)
			return
		}
		reg := prometheus.NewRegistry()
		if afterProbe != nil {
			c = savingCollector{c, func() { afterProbe(module, target) }} // saved before the answer goes out
		}
		reg.MustRegister(c)
		promhttp.HandlerFor(reg, expositionOpts(logger)).ServeHTTP(w, r)
	}
}

// savingCollector runs a collector, then a save, within the collection: the
// registry sends the answer only once every collector has returned.
type savingCollector struct {
	prometheus.Collector
	save func()
}

func (c savingCollector) Collect(ch chan<- prometheus.Metric) {
	c.Collector.Collect(ch)
	c.save()
}
