// Command release cross-builds indexima_exporter and packs release archives,
// reproducibly: the same source and Go toolchain give byte-identical
// archives, whoever builds them, wherever, whenever.
//
//	go run ./scripts/release -version 0.1.0                 # every platform: .build/ and dist/
//	go run ./scripts/release -version 0.1.0 -binaries-only -platforms linux/amd64,linux/arm64
//
// `make release VERSION=x.y.z` and `make crossbuild` call it.
//
// What makes the output reproducible:
//   - binaries: CGO_ENABLED=0, -trimpath (no build directory), -buildvcs=false
//     (the version comes from -ldflags alone, whatever the checkout or
//     GOFLAGS), the default instruction-set levels pinned (GOAMD64=v1, ...),
//     no build user or host, and as build date the commit's time
//     (SOURCE_DATE_EPOCH, else `git log -1 --format=%ct`), never the clock;
//   - archives: fixed entry order, modes 0755/0644, owner 0:0 with no names,
//     every mtime the build date, gzip without name or time.
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Name is the binary and the prefix of every archive.
const Name = "indexima_exporter"

const versionPkg = "github.com/prometheus/common/version"

// Platforms are the release targets, as GOOS/GOARCH; linux/armv7 is
// GOARCH=arm with GOARM=7.
var Platforms = []string{
	"linux/amd64", "linux/arm64", "linux/armv7", "linux/ppc64le", "linux/s390x", "linux/riscv64",
	"darwin/amd64", "darwin/arm64",
	"windows/amd64", "windows/arm64",
	"freebsd/amd64",
}

// Docs are the files every archive carries beside the binary.
var Docs = []string{"LICENSE", "README.md", "indexima.example.yml"}

// archFlags are the environment of a platform's build: GOARCH, and the
// instruction-set level pinned to Go's default so that a GOAMD64=v3 (say) in
// the releaser's environment cannot change the binaries.
func archFlags(arch string) ([]string, error) {
	switch arch {
	case "amd64":
		return []string{"GOARCH=amd64", "GOAMD64=v1"}, nil
	case "arm64":
		return []string{"GOARCH=arm64", "GOARM64=v8.0"}, nil
	case "armv7":
		return []string{"GOARCH=arm", "GOARM=7"}, nil
	case "ppc64le":
		return []string{"GOARCH=ppc64le", "GOPPC64=power8"}, nil
	case "s390x":
		return []string{"GOARCH=s390x"}, nil
	case "riscv64":
		return []string{"GOARCH=riscv64", "GORISCV64=rva20u64"}, nil
	}
	return nil, fmt.Errorf("unknown architecture %q", arch)
}

// s390xGCFlags work around a bug of Go's s390x backend (seen with Go
// 1.26.8): a little-endian store of a uint32 field of a global struct into
// a local byte array, as internal/simulator/badbody.go does for its gzip
// trailer, becomes a byte-reversed load from a static address (MOVWBR
// sym(SB), R) that the assembler refuses: "illegal combination MOVWBR ADDR".
// Without optimisations the load and the reversal stay apart. Only the
// simulator, which only --demo and the tests use, is compiled so, and only
// for s390x; the flags are fixed, so the build stays reproducible.
const s390xGCFlags = "github.com/indexima-exporter/indexima_exporter/internal/simulator=-N"

type options struct {
	version      string
	platforms    []string
	buildDir     string // binaries: BUILD/<os>-<arch>/indexima_exporter[.exe]
	distDir      string // archives and sha256sums.txt
	binariesOnly bool
	revision     string // stamped; "" means the checkout's HEAD
	srcDir       string // the module root
}

func main() {
	var o options
	var platforms string
	flag.StringVar(&o.version, "version", "", "Version to stamp and to name the archives with, e.g. 0.1.0 (required).")
	flag.StringVar(&platforms, "platforms", "all", "Comma-separated os/arch list, or all: "+strings.Join(Platforms, ","))
	flag.StringVar(&o.buildDir, "build-dir", ".build", "Directory of the binaries, one <os>-<arch> directory each (the Dockerfile copies from there).")
	flag.StringVar(&o.distDir, "dist-dir", "dist", "Directory of the archives and sha256sums.txt.")
	flag.BoolVar(&o.binariesOnly, "binaries-only", false, "Build the binaries only, no archive (make crossbuild, the image).")
	flag.StringVar(&o.revision, "revision", "", "Commit to stamp (default: the checkout's HEAD, unknown outside a git checkout, as in an image build).")
	flag.Parse()
	o.platforms = Platforms
	if platforms != "all" && platforms != "" {
		o.platforms = strings.FieldsFunc(platforms, func(r rune) bool { return r == ',' || r == ' ' })
	}
	var err error
	if o.srcDir, err = os.Getwd(); err != nil {
		fail(err)
	}
	if err := run(context.Background(), o, os.Stdout); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "release: %v\n", err)
	os.Exit(1)
}

func run(ctx context.Context, o options, log io.Writer) error {
	if o.version == "" || strings.ContainsAny(o.version, "/ \t") {
		return fmt.Errorf("-version %q: give the version to release, e.g. make release VERSION=0.1.0", o.version)
	}
	for _, p := range o.platforms {
		if !validPlatform(p) {
			return fmt.Errorf("platform %q is not one of %s", p, strings.Join(Platforms, ", "))
		}
	}
	revision := o.revision
	if revision == "" {
		revision = git(ctx, o.srcDir, "rev-parse", "HEAD")
	}
	if revision == "" {
		revision = "unknown"
	}
	date, err := sourceDate(ctx, o.srcDir)
	// Binaries alone can do without a date (an image built from a source
	// tree without .git and without SOURCE_DATE_EPOCH): they say "unknown".
	// Archives cannot: every entry's time is the build date.
	if err != nil && !(o.binariesOnly && errors.Is(err, errNoDate)) {
		return err
	}
	gover, err := exec.CommandContext(ctx, "go", "env", "GOVERSION").Output()
	if err != nil {
		return fmt.Errorf("go env GOVERSION: %w", err)
	}
	fmt.Fprintf(log, "release %s: revision %s, date %s, %s\n", o.version, revision, stampedDate(date), strings.TrimSpace(string(gover)))

	var archives []string
	for _, p := range o.platforms {
		start := time.Now()
		bin, err := build(ctx, o, p, revision, date)
		if err != nil {
			return err
		}
		if o.binariesOnly {
			fmt.Fprintf(log, "  %-14s %s (%s)\n", p, bin, time.Since(start).Round(time.Millisecond))
			continue
		}
		a, err := pack(o, p, bin, date)
		if err != nil {
			return err
		}
		archives = append(archives, a)
		fmt.Fprintf(log, "  %-14s %s (%s)\n", p, a, time.Since(start).Round(time.Millisecond))
	}
	if o.binariesOnly {
		return nil
	}
	sums, err := writeChecksums(o.distDir, archives)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "  %s\n", sums)
	return nil
}

func validPlatform(p string) bool {
	for _, q := range Platforms {
		if p == q {
			return true
		}
	}
	return false
}

// git runs git in dir and returns its trimmed output, "" when it fails (a
// source tree without .git).
func git(ctx context.Context, dir string, args ...string) string {
	out, err := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// errNoDate: neither SOURCE_DATE_EPOCH nor a git checkout gives a build date.
var errNoDate = errors.New("no build date: set SOURCE_DATE_EPOCH (Unix seconds) when building outside a git checkout")

// stampedDate is the build date as the binaries carry it; the zero time
// (no date known) is "unknown".
func stampedDate(date time.Time) string {
	if date.IsZero() {
		return "unknown"
	}
	return date.Format("20060102-15:04:05")
}

// sourceDate is the build date stamped into the binaries and the archives:
// SOURCE_DATE_EPOCH (reproducible-builds.org) when set, else the time of the
// commit being built.
func sourceDate(ctx context.Context, dir string) (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		s = git(ctx, dir, "log", "-1", "--format=%ct")
	}
	if s == "" {
		return time.Time{}, errNoDate
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", s, err)
	}
	return time.Unix(sec, 0).UTC(), nil
}

// build cross-compiles the exporter for platform p into the build directory.
func build(ctx context.Context, o options, p, revision string, date time.Time) (string, error) {
	goos, arch, _ := strings.Cut(p, "/")
	env, err := archFlags(arch)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(o.buildDir, goos+"-"+arch, binaryName(goos))
	ldflags := strings.Join([]string{
		"-s", "-w", // no symbol table or DWARF: smaller archives
		"-X", versionPkg + ".Version=" + o.version,
		"-X", versionPkg + ".Revision=" + revision,
		"-X", versionPkg + ".BuildDate=" + stampedDate(date),
	}, " ")
	args := []string{"build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags}
	if arch == "s390x" {
		args = append(args, "-gcflags", s390xGCFlags)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "-o", bin, ".")...)
	cmd.Dir = o.srcDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOFLAGS=-buildvcs=false")
	cmd.Env = append(cmd.Env, env...)
	if !filepath.IsAbs(bin) {
		bin = filepath.Join(o.srcDir, bin)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build for %s: %v\n%s", p, err, out)
	}
	return bin, nil
}

func binaryName(goos string) string {
	if goos == "windows" {
		return Name + ".exe"
	}
	return Name
}

// ArchiveName is the file name of a platform's archive: tar.gz, or zip for
// Windows, named as Prometheus names its own
// (prometheus-2.42.0.linux-amd64.tar.gz).
func ArchiveName(version, platform string) string {
	goos, arch, _ := strings.Cut(platform, "/")
	base := fmt.Sprintf("%s-%s.%s-%s", Name, version, goos, arch)
	if goos == "windows" {
		return base + ".zip"
	}
	return base + ".tar.gz"
}

// entry is one file of an archive.
type entry struct {
	name string // inside the archive's top directory
	mode int64
	data []byte
}

// pack writes the platform's archive: one directory named like the archive,
// holding the binary and Docs.
func pack(o options, p, bin string, date time.Time) (string, error) {
	goos, _, _ := strings.Cut(p, "/")
	data, err := os.ReadFile(bin)
	if err != nil {
		return "", err
	}
	entries := []entry{{name: binaryName(goos), mode: 0o755, data: data}}
	for _, d := range Docs {
		b, err := os.ReadFile(filepath.Join(o.srcDir, d))
		if err != nil {
			return "", err
		}
		entries = append(entries, entry{name: d, mode: 0o644, data: b})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })

	name := ArchiveName(o.version, p)
	top := strings.TrimSuffix(strings.TrimSuffix(name, ".zip"), ".tar.gz")
	var buf bytes.Buffer
	if goos == "windows" {
		err = writeZip(&buf, top, entries, date)
	} else {
		err = writeTarGz(&buf, top, entries, date)
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	dist := o.distDir
	if !filepath.IsAbs(dist) {
		dist = filepath.Join(o.srcDir, dist)
	}
	if err := os.MkdirAll(dist, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(dist, name)
	return out, os.WriteFile(out, buf.Bytes(), 0o644)
}

func writeTarGz(w io.Writer, top string, entries []entry, date time.Time) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	// gzip's header keeps no name and a zero time.
	tw := tar.NewWriter(gz)
	hdr := func(name string, typ byte, mode, size int64) *tar.Header {
		return &tar.Header{Typeflag: typ, Name: name, Mode: mode, Size: size, ModTime: date, Uid: 0, Gid: 0, Format: tar.FormatPAX}
	}
	if err := tw.WriteHeader(hdr(top+"/", tar.TypeDir, 0o755, 0)); err != nil {
		return err
	}
	for _, e := range entries {
		if err := tw.WriteHeader(hdr(path.Join(top, e.name), tar.TypeReg, e.mode, int64(len(e.data)))); err != nil {
			return err
		}
		if _, err := tw.Write(e.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func writeZip(w io.Writer, top string, entries []entry, date time.Time) error {
	zw := zip.NewWriter(w)
	dir := &zip.FileHeader{Name: top + "/", Method: zip.Store, Modified: date}
	dir.SetMode(os.ModeDir | 0o755)
	if _, err := zw.CreateHeader(dir); err != nil {
		return err
	}
	for _, e := range entries {
		h := &zip.FileHeader{Name: path.Join(top, e.name), Method: zip.Deflate, Modified: date}
		h.SetMode(os.FileMode(e.mode))
		f, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := f.Write(e.data); err != nil {
			return err
		}
	}
	return zw.Close()
}

// writeChecksums writes sha256sums.txt beside the archives, in the format of
// `sha256sum` (check with `sha256sum -c sha256sums.txt`), sorted by name.
func writeChecksums(dist string, archives []string) (string, error) {
	sort.Strings(archives)
	var b strings.Builder
	for _, a := range archives {
		data, err := os.ReadFile(a)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%x  %s\n", sha256.Sum256(data), filepath.Base(a))
	}
	out := filepath.Join(filepath.Dir(archives[0]), "sha256sums.txt")
	return out, os.WriteFile(out, []byte(b.String()), 0o644)
}
