package web

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// InOrder gathers its registries one after the other and joins their
// metric families. It is prometheus.Gatherers without the second check of
// every series: each registry has checked its own, and when no family name
// is in two of them (the case here: the API call metrics and the rest) the
// join cannot make a duplicate, and that check costs a large scrape much
// CPU (docs/performance.md). When a name is shared, Gatherers merges and checks
// what was gathered (nothing is collected twice).
type InOrder []prometheus.Gatherer

func (g InOrder) Gather() ([]*dto.MetricFamily, error) {
	var all []*dto.MetricFamily
	var errs prometheus.MultiError
	gathered := make(prometheus.Gatherers, len(g))
	seen := map[string]bool{}
	shared := false
	for i, r := range g {
		mfs, err := r.Gather()
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
		return gathered.Gather()
	}
	sort.Slice(all, func(i, j int) bool { return all[i].GetName() < all[j].GetName() })
	return all, errs.MaybeUnwrap()
}
