package simulator

import "fmt"

// Name pools for the per-node tables and hyperindexes. A node's names are a
// pure function of its position, so two runs name things the same way.
var (
	schemas   = []string{"sales", "finance", "marketing", "logistics", "web", "iot", "hr", "ops"}
	tableBase = []string{"orders", "customers", "products", "invoices", "ledger", "campaigns",
		"shipments", "sessions", "clicks", "sensors", "employees", "payments"}
	indexDims = []string{"date", "region", "customer", "product", "store", "channel", "hour", "status"}
)

const (
	tablesPerNode  = 6
	indexesPerNode = 8
)

func nodeTables(index int) []string {
	out := make([]string, tablesPerNode)
	for j := range out {
		k := index*tablesPerNode + j
		out[j] = schemas[(k/len(tableBase)+j)%len(schemas)] + "." + tableBase[k%len(tableBase)]
	}
	return dedupe(out)
}

func nodeIndexes(index int, tables []string) []string {
	out := make([]string, indexesPerNode)
	for j := range out {
		t := tables[j%len(tables)]
		// "sales.orders" -> "hi_orders_date"
		short := t
		for i := len(t) - 1; i >= 0; i-- {
			if t[i] == '.' {
				short = t[i+1:]
				break
			}
		}
		out[j] = fmt.Sprintf("hi_%s_%s", short, indexDims[(index+j)%len(indexDims)])
	}
	return dedupe(out)
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	out := in[:0]
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// tableColumns is the deterministic answer of get/columns for a table.
func tableColumns(table string) [][2]string {
	cols := [][2]string{{"id", "BIGINT"}, {"created_at", "TIMESTAMP"}}
	h := 0
	for _, c := range table {
		h = h*31 + int(c)
	}
	if h < 0 {
		h = -h
	}
	extra := [][2]string{{"amount", "DOUBLE"}, {"region", "STRING"}, {"quantity", "INT"},
		{"label", "STRING"}, {"score", "FLOAT"}, {"active", "BOOLEAN"}, {"day", "DATE"}}
	for i := 0; i < 3+h%4; i++ {
		cols = append(cols, extra[(h+i)%len(extra)])
	}
	return cols
}
