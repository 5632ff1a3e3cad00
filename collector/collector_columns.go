package collector

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func init() {
	registerCollector("columns", false, "column count of loaded tables from get/columns/:table",
		func() subCollector { return columnsCollector{} })
}

// columnsPerPoll bounds the get/columns calls of one poll; the other tables
// are refreshed by the next polls.
const columnsPerPoll = 20

// columnsCollector emits indexima_table_columns{table} for the tables loaded
// on the node, from get/columns/:table, refreshed every Options.InfoRefresh.
type columnsCollector struct{}

type columnsEntry struct {
	count     int // -1: the answer's shape gave no count
	fetched   time.Time
	attempted time.Time
}

// columnsCache is replaced, never modified, once stored in a node's caches.
type columnsCache map[string]columnsEntry

func (columnsCollector) refresh(ctx context.Context, r refreshEnv, prev any) (any, error) {
	old, _ := prev.(columnsCache)
	next := columnsCache{}
	var due []string
	for table := range r.st.Tables { // tables no longer loaded are forgotten
		e, ok := old[table]
		if !ok {
			e.count = -1
		}
		next[table] = e
		switch {
		case !ok:
			due = append(due, table)
		case e.attempted.After(e.fetched) && r.now.Sub(e.attempted) < min(r.every, retryAfterFailure):
		case r.now.Sub(e.fetched) >= r.every:
			due = append(due, table)
		}
	}
	sort.Strings(due)
	if len(due) > columnsPerPoll {
		due = due[:columnsPerPoll]
	}
	var errs []error
	for _, table := range due {
		e := next[table]
		e.attempted = r.now
		info, err := r.api.Columns(ctx, r.node.target, table)
		if err != nil {
			errs = append(errs, err)
		} else {
			e.count, e.fetched = info.Count, r.now
			if e.count < 0 && len(info.Columns) > 0 {
				e.count = len(info.Columns)
			}
		}
		next[table] = e
	}
	return next, errors.Join(errs...)
}

func (columnsCollector) update(ch chan<- prometheus.Metric, v *nodeView) error {
	c, _ := v.caches["columns"].(columnsCache)
	for _, table := range sortedKeys(c) {
		if e := c[table]; e.count >= 0 && !e.fetched.IsZero() {
			v.gauge(ch, v.d.tableColumns, float64(e.count), table)
		}
	}
	return v.res.refreshErr["columns"]
}
