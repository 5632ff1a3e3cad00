package faults

import (
	"testing"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// TestMain removes the exporter binary the tests built (a run of the fuzz
// targets alone never builds it).
func TestMain(m *testing.M) { testkit.Main(m) }

// exporterBinary returns the path of the exporter the tests run, built once
// on first use, with -race when the suite runs with -race (so that the soak
// also hunts data races in the binary); it fails the test if it cannot be
// built.
func exporterBinary(t *testing.T) string {
	t.Helper()
	return testkit.ExporterBinaryAsTests(t)
}
