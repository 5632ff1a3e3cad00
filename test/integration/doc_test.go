// Package integration tests the real indexima_exporter binary against the
// simulated console: the binary is built once, run on a free loopback port
// and scraped over HTTP; the simulator runs in the test with a manual clock,
// so every expected value is derived from its ground truth (Truth), never
// written down.
package integration
