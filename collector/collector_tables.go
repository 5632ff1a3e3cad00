package collector

func init() {
	registerCollector("tables", true, "tables loaded since the latest cluster start, from events",
		func() subCollector { return tablesCollector{} })
}

// tablesCollector emits indexima_table_loaded{table} for every table loaded
// since the latest CLUSTER_START or CLUSTER_STOP.
type tablesCollector struct{}

func (tablesCollector) update(v *nodeView) error {
	for _, name := range sortedKeys(v, v.st.Tables) {
		v.gauge(v.d.table, 1, name)
	}
	return v.res.Err
}

// tablesDescs are the descriptors of the tables collector's series.
type tablesDescs struct {
	table *seriesDesc
}

func newTablesDescs(node nodeDesc) tablesDescs {
	return tablesDescs{
		table: node(namespace+"_table_loaded",
			"1 for each table loaded on the node since the latest CLUSTER_START or CLUSTER_STOP, from TABLE_LOADED events.", labelTable),
	}
}
