package faults

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// exporterBin is the indexima_exporter binary every test runs.
var exporterBin string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "indexima-faults-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	exporterBin = filepath.Join(dir, "indexima_exporter")
	if err := buildExporter(exporterBin); err != nil {
		fmt.Fprintln(os.Stderr, "faults: building the exporter:", err)
		return 1
	}
	return m.Run()
}

// buildExporter builds the module's main package, the same program users
// run, with -race when this suite runs with it.
func buildExporter(out string) error {
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	args := []string{"build", "-o", out}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "github.com/indexima-exporter/indexima_exporter")
	cmd := exec.Command(goTool, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}
