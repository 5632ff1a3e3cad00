package testkit

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// The exporter's module path, built by ExporterBinary.
const exporterPackage = "github.com/indexima-exporter/indexima_exporter"

var (
	buildOnce sync.Once
	buildDir  string
	binPath   string
	buildErr  error
)

// ExporterBinary builds the exporter once per test binary and returns its
// path. Packages that use it remove it at the end with Main.
func ExporterBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "indexima_exporter-test-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(buildDir, "indexima_exporter")
		goBin, err := exec.LookPath("go")
		if err != nil {
			goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, goBin, "build", "-o", binPath, exporterPackage).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build of the exporter: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// Main runs a package's tests, then removes the binary ExporterBinary built.
// Use it as: func TestMain(m *testing.M) { testkit.Main(m) }.
func Main(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}
