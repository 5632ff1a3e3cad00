package collector

import (
	"context"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// collect polls the nodes of clusters concurrently (bounded by
// Options.Concurrency, shared with concurrent scrapes) within the scrape's
// deadline (ctx), then emits per node the core series and those of every
// enabled sub-collector. A node whose poll the deadline cut is down for
// this scrape; the others are served on time.
func (e *Exporter) collect(ctx context.Context, ch chan<- prometheus.Metric, clusters []*clusterRuntime) {
	type polled struct {
		n   *nodeRuntime
		res pollResult
	}
	byCluster := make([][]polled, len(clusters))
	var wg sync.WaitGroup
	for ci, c := range clusters {
		byCluster[ci] = make([]polled, len(c.nodes))
		for ni, n := range c.nodes {
			byCluster[ci][ni].n = n
			wg.Add(1)
			go func(p *polled) {
				defer wg.Done()
				p.res = p.n.pollShared(ctx, e)
			}(&byCluster[ci][ni])
		}
	}
	wg.Wait()

	var views []*nodeView
	for ci, c := range clusters {
		answered := false
		for _, p := range byCluster[ci] {
			answered = answered || p.res.consoleAnswered
			v := p.n.view(p.res, e.lateWindow())
			e.emitCore(ch, p.n, v)
			if v.st.Contacted {
				views = append(views, v)
			}
		}
		if len(c.nodes) > 0 {
			var lv []string
			if c.d.withCluster {
				lv = []string{c.name}
			}
			ch <- prometheus.MustNewConstMetric(c.d.consoleUp, prometheus.GaugeValue, boolValue(answered), lv...)
		}
	}

	for _, sc := range e.subs {
		start := time.Now()
		ok := true
		for _, v := range views {
			if err := sc.c.update(ch, v); err != nil {
				ok = false
				level.Debug(e.logger).Log("msg", "collector incomplete for node", "collector", sc.name, "node", v.labels[len(v.labels)-1], "err", err)
			}
		}
		ch <- prometheus.MustNewConstMetric(collectorDurationDesc, prometheus.GaugeValue, time.Since(start).Seconds(), sc.name)
		ch <- prometheus.MustNewConstMetric(collectorSuccessDesc, prometheus.GaugeValue, boolValue(ok), sc.name)
	}
}

// emitCore emits the series every configured node has: up, the duration of
// its latest poll and the dropped label values.
func (e *Exporter) emitCore(ch chan<- prometheus.Metric, n *nodeRuntime, v *nodeView) {
	v.gauge(ch, v.d.up, boolValue(v.res.err == nil), "")
	n.mu.Lock()
	d := n.lastPoll
	n.mu.Unlock()
	v.gauge(ch, v.d.pollDuration, d.Seconds(), "")
	n.mu.Lock()
	failures := cloneFailures(n.failures)
	n.mu.Unlock()
	// A reason's series appears at its first failure: seven series at 0
	// per node would be most of the cost of this counter.
	for _, reason := range failureReasons {
		if c, ok := failures[reason]; ok {
			v.counter(ch, v.d.pollFailures, float64(c), reason)
		}
	}
	for _, label := range []string{labelDownNode, labelIndex, labelTable} {
		if c, ok := v.st.Dropped[label]; ok {
			v.counter(ch, v.d.dropped, float64(c), label)
		}
	}
}

// refresh runs the refreshers of the enabled sub-collectors inside a node's
// poll and returns the node's new caches and the refreshers' errors.
func (e *Exporter) refresh(ctx context.Context, api nodeAPI, n *nodeRuntime, st *tracker.State, prev map[string]any, logger log.Logger) (map[string]any, map[string]error) {
	caches := make(map[string]any, len(prev))
	var errs map[string]error
	env := refreshEnv{api: api, node: n, st: st, now: time.Now(), every: e.opts.InfoRefresh}
	for _, sc := range e.subs {
		r, ok := sc.c.(refresher)
		if !ok {
			continue
		}
		v, err := r.refresh(ctx, env, prev[sc.name])
		if v != nil {
			caches[sc.name] = v
		}
		if err != nil {
			if errs == nil {
				errs = map[string]error{}
			}
			errs[sc.name] = err
			level.Warn(logger).Log("msg", "info call failed; node not marked down", "collector", sc.name, "err", err)
		}
	}
	return caches, errs
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func cloneFailures(m map[string]uint64) map[string]uint64 {
	c := make(map[string]uint64, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
