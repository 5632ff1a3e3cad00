package collector

import "github.com/prometheus/client_golang/prometheus"

func init() {
	registerCollector("tables", true, "tables loaded since the latest cluster start, from events",
		func() subCollector { return tablesCollector{} })
}

// tablesCollector emits indexima_table_loaded{table} for every table loaded
// since the latest CLUSTER_START or CLUSTER_STOP.
type tablesCollector struct{}

func (tablesCollector) update(ch chan<- prometheus.Metric, v *nodeView) error {
	for _, name := range sortedKeys(v.st.Tables) {
		v.gauge(ch, v.d.table, 1, name)
	}
	return v.res.Err
}
