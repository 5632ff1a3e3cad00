package testkit

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// The exporter's module path, built by ExporterBinary.
const exporterPackage = "github.com/indexima-exporter/indexima_exporter"

// build is one build of the exporter for a test binary, made on first use.
type build struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// plain and raced are the two builds a test binary may ask for.
var plain, raced build

// ExporterBinary builds the exporter once per test binary and returns its
// path. Packages that use it remove it at the end with Main.
func ExporterBinary(t testing.TB) string {
	t.Helper()
	return plain.get(t, false)
}

// ExporterBinaryAsTests is ExporterBinary built with -race when the test
// binary itself runs with -race: the fault suite hunts data races in the
// exporter as it injects faults.
func ExporterBinaryAsTests(t testing.TB) string {
	t.Helper()
	if !raceEnabled {
		return plain.get(t, false)
	}
	return raced.get(t, true)
}

func (b *build) get(t testing.TB, race bool) string {
	t.Helper()
	b.once.Do(func() {
		b.dir, b.err = os.MkdirTemp("", "indexima_exporter-test-")
		if b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, "indexima_exporter")
		// `go test` puts its own go first in the tests' PATH.
		goBin, err := exec.LookPath("go")
		if err != nil {
			b.err = fmt.Errorf("go build of the exporter: no go in PATH: %v", err)
			return
		}
		args := []string{"build", "-o", b.path}
		if race {
			args = append(args, "-race")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, goBin, append(args, exporterPackage)...).CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("go build of the exporter: %v\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// Main runs a package's tests, then removes the binaries its tests built.
// Use it as: func TestMain(m *testing.M) { testkit.Main(m) }.
func Main(m *testing.M) {
	code := m.Run()
	for _, b := range []*build{&plain, &raced} {
		if b.dir != "" {
			os.RemoveAll(b.dir)
		}
	}
	os.Exit(code)
}
