package web

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// InOrder gathers its gatherers one after the other and joins their
// metric families. It is prometheus.Gatherers without the second check of
// every series: each gatherer has checked its own, and when no family name
// is in two of them (the case here: the API call metrics and the rest) the
// join cannot make a duplicate, and that check costs a large scrape much
// CPU (docs/performance.md). When a name is shared, Gatherers merges and checks
// what was gathered (nothing is collected twice). It is transactional, as
// the exporter's scrape is (collector.ScrapeGatherer): done hands every
// gatherer's families back once the answer is written.
type InOrder []prometheus.TransactionalGatherer

// Gather gathers each gatherer in order; its done hands each one's
// families back.
func (g InOrder) Gather() ([]*dto.MetricFamily, func(), error) {
	var all []*dto.MetricFamily
	var errs prometheus.MultiError
	dones := make([]func(), 0, len(g))
	done := func() {
		for _, d := range dones {
			d()
		}
	}
	gathered := make(prometheus.Gatherers, len(g))
	seen := map[string]bool{}
	shared := false
	for i, r := range g {
		mfs, d, err := r.Gather()
		dones = append(dones, d)
		if err != nil {
			errs = append(errs, err)
		}
		gathered[i] = prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return mfs, err })
		for _, mf := range mfs {
			shared = shared || seen[mf.GetName()]
			seen[mf.GetName()] = true
		}
		all = append(all, mfs...)
	}
	if shared {
		mfs, err := gathered.Gather()
		return mfs, done, err
	}
	sort.Slice(all, func(i, j int) bool { return all[i].GetName() < all[j].GetName() })
	return all, done, errs.MaybeUnwrap()
}
