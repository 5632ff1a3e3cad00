package collector

func init() {
	registerCollector("columns", false, "column count of loaded tables from get/columns/:table",
		func() subCollector { return columnsCollector{} })
}

// columnsCollector emits indexima_table_columns{table} for the tables loaded
// on the node, from get/columns/:table, which the poller calls at most
// every InfoRefresh per table while this collector is on (poller.InfoCalls).
type columnsCollector struct{}

func (columnsCollector) update(v *nodeView) error {
	cols := v.info.Columns()
	for _, table := range sortedKeys(v, cols) {
		v.gauge(v.d.tableColumns, float64(cols[table]), table)
	}
	return v.res.ColumnsErr
}

// columnsDescs are the descriptors of the columns collector's series.
type columnsDescs struct {
	tableColumns *seriesDesc
}

func newColumnsDescs(node nodeDesc) columnsDescs {
	return columnsDescs{
		tableColumns: node(namespace+"_table_columns",
			"Number of columns of a loaded table, from the node's get/columns answer (refreshed periodically).", labelTable),
	}
}
