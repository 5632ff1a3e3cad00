// Package testkit is test support shared by the project's test packages:
// finding the external tools the tests need (with the CI rule: missing fails
// in CI, skips elsewhere), building the exporter binary once, and small
// helpers. The exporter itself never imports it.
package testkit
