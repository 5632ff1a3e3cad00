// Package harness is the load harness of indexima_exporter: it runs the real
// exporter binary (and, for comparison, json_exporter) as subprocesses
// against the in-process simulator on loopback, scrapes them like Prometheus
// would, and measures what performance.md reports: scrape latency, console
// requests and logins per node and scrape, CPU per node-scrape (from
// /proc/PID/stat) and resident memory (/proc/PID/status). Its table by
// knob of the console (knobs.go) can also run the collector in-process,
// for go test and to trace every console call.
//
// Everything is bounded: a fixed number of scrapes per phase, every wait
// with a deadline, every address on 127.0.0.1.
package harness
