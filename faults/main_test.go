package faults

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// The indexima_exporter binary the tests run, built once on first use (a
// run of the fuzz targets alone never builds it).
var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// exporterBinary returns the path of the built exporter, failing the test
// if it cannot be built.
func exporterBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "indexima-faults-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "indexima_exporter")
		binErr = buildExporter(binPath)
	})
	if binErr != nil {
		t.Fatalf("building the exporter: %v", binErr)
	}
	return binPath
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
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build: %w", err)
	}
	return nil
}
