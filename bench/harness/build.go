package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// JSONExporterModule and JSONExporterVersion are the json_exporter the
// comparison is made with.
const (
	JSONExporterModule  = "github.com/prometheus-community/json_exporter"
	JSONExporterVersion = "v0.7.0"
)

// buildTimeout bounds each go build the harness runs.
const buildTimeout = 8 * time.Minute

// moduleRoot is the directory of the exporter's go.mod.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", fmt.Errorf("go list -m: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// BuildExporter builds the indexima_exporter binary into dir and returns its
// path. It is built as the release archives and the image build it
// (scripts/release): without cgo and without a symbol table or DWARF,
// from the module root, only the version stamps left out. What the
// harness measures is what operators run: the binary's own pages are part
// of its RSS (all of them, on the machine docs/performance.md measures
// on), and a build with cgo (the go command's default where a C compiler
// is found) maps the C library and its loader too, 1.5 MiB more of the
// day's RSS (docs/performance.md).
func BuildExporter(dir string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	root, err := moduleRoot(ctx)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "indexima_exporter")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build of the exporter: %v: %s", err, out)
	}
	return bin, nil
}

// DefaultJSONExporterDir is where the harness keeps its json_exporter build:
// outside the repository, a scratch module of its own.
func DefaultJSONExporterDir() string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "indexima_exporter", "tools", "json_exporter")
}

// EnsureJSONExporter returns the path of a json_exporter binary in dir,
// building it there first when missing, with the recipe that works with the
// module proxy (go get -tool in a scratch module, then go build).
func EnsureJSONExporter(dir string) (string, error) {
	bin := filepath.Join(dir, "json_exporter-"+JSONExporterVersion)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	run := func(args ...string) error {
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = dir
		// The scratch module must not see the exporter's workspace or module.
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %s (in %s): %v: %s", strings.Join(args, " "), dir, err, out)
		}
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		if err := run("mod", "init", "jsonexportertool"); err != nil {
			return "", err
		}
	}
	if err := run("get", "-tool", JSONExporterModule+"@"+JSONExporterVersion); err != nil {
		return "", err
	}
	if err := run("build", "-o", bin, JSONExporterModule); err != nil {
		return "", err
	}
	return bin, nil
}
