package harness

import "testing"

// The -compare columns of collections and allocations per scrape come from
// these two families of the exporter's Go collector.
func TestGCAndAllocsReadsTheGoCollector(t *testing.T) {
	e, err := parseExposition([]byte(`# TYPE go_gc_duration_seconds summary
go_gc_duration_seconds{quantile="0.5"} 0.0003
go_gc_duration_seconds_sum 0.11
go_gc_duration_seconds_count 170
# TYPE go_memstats_alloc_bytes_total counter
go_memstats_alloc_bytes_total 4.25e+08
`))
	if err != nil {
		t.Fatal(err)
	}
	if gc, allocs := e.gcAndAllocs(); gc != 170 || allocs != 4.25e8 {
		t.Fatalf("gcAndAllocs() = %v, %v; want 170 collections and 4.25e8 bytes", gc, allocs)
	}
	if gc, allocs := (exposition{}).gcAndAllocs(); gc != 0 || allocs != 0 {
		t.Fatalf("gcAndAllocs() without the Go collector = %v, %v; want 0, 0", gc, allocs)
	}
}
