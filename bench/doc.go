// Package bench holds the performance measurements of indexima_exporter:
// Go benchmarks of ingestion (a day's backlog after an outage) and of
// scrapes against many slow nodes, and a quick run of the load harness
// (bench/harness, bench/cmd/loadharness) so that CI exercises its code,
// and the harness's table by knob of the console in-process
// (TestKnobTable), which holds every row to its console calls per node and
// scrape and to reported = counted at rest.
// docs/performance.md reports the figures and the commands that give them:
//
//	go test -run '^$' -bench . -benchmem ./bench/
//	go run ./bench/cmd/loadharness -n 1,10,50,200
//
// Speed is only ever measured here, never asserted in tests: calls are
// counted, not timed.
package bench
