package app

import (
	"os"
	"testing"
)

// TestMain keeps GOGC as the runtime has it for the whole test binary: the
// /metrics handlers the tests serve would otherwise set it after their
// scrapes (gc.go), possibly while a test of gc.go sets and reads it
// itself. gc_test.go tests the setting with a rig of its own.
func TestMain(m *testing.M) {
	keepGOGC = true
	os.Exit(m.Run())
}
