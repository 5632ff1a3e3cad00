// Package faults is the exporter's end-to-end fault suite and soak test.
//
// Every test builds the real indexima_exporter binary once (TestMain), runs
// it as a subprocess against the simulated console (internal/simulator) on
// loopback, drives the simulator's manual clock and fault injection, scrapes
// /metrics over HTTP and compares the event counters with the simulator's
// ground truth: for every node and event type, the events completed after
// the exporter first reached the node. Nothing lost, nothing counted twice.
//
// The package has no non-test code besides this comment; see
// docs/reliability.md for what each case proves and the figures measured.
package faults
