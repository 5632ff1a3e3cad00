package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/elf"
	"debug/pe"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// The platforms the test builds: one ELF other than the host's, one PE, and
// the host's own (linux/amd64 on CI) to run the binary.
var testPlatforms = []string{"linux/amd64", "linux/arm64", "windows/amd64"}

// makeRelease runs `make release` in dir with the test's platforms, into
// dist, and returns sha256sums.txt.
func makeRelease(t *testing.T, ctx context.Context, dir, version, dist string) string {
	t.Helper()
	makeBin := testkit.Tool(t, "make", "Debian package make")
	cmd := exec.CommandContext(ctx, makeBin, "--no-print-directory", "release",
		"VERSION="+version, "PLATFORMS="+strings.Join(testPlatforms, ","),
		"BUILD_DIR="+filepath.Join(t.TempDir(), "build"), "DIST_DIR="+dist)
	cmd.Dir = dir
	// Not the parent make's flags or jobserver, if `make test` runs us.
	cmd.Env = append(os.Environ(), "MAKEFLAGS=", "MFLAGS=", "MAKELEVEL=")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make release in %s: %v\n%s", dir, err, out)
	}
	t.Logf("make release in %s: %s\n%s", dir, time.Since(start).Round(time.Millisecond), out)
	sums, err := os.ReadFile(filepath.Join(dist, "sha256sums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(sums)
}

// TestRelease builds release archives twice, from this checkout and from a
// fresh clone of it at another path, later: the checksums must be equal
// (reproducible: no build directory, clock, user or host in them). It then
// checks each archive's checksum, entries, owners, modes, times and binary,
// and runs the host's binary.
func TestRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-builds the exporter; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	root := testkit.RepoRoot(t)
	const version = "0.0.0-releasetest"
	dist := filepath.Join(t.TempDir(), "dist")
	sums := makeRelease(t, ctx, root, version, dist)

	// Checksums: one line per archive, each the archive's sha256.
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(sums), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("sha256sums.txt line %q is not `SUM  NAME`", line)
		}
		data, err := os.ReadFile(filepath.Join(dist, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%x", sha256.Sum256(data)); got != sum {
			t.Errorf("%s: sha256 %s, sha256sums.txt says %s", name, got, sum)
		}
		names = append(names, name)
	}
	var want []string
	for _, p := range testPlatforms {
		want = append(want, ArchiveName(version, p))
	}
	sort.Strings(want)
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("sha256sums.txt lists %v, want %v", names, want)
	}

	clone := testkit.CloneWorkingTree(t, ctx)
	head := gitOut(t, ctx, clone, "rev-parse", "HEAD")
	epoch, err := strconv.ParseInt(gitOut(t, ctx, clone, "log", "-1", "--format=%ct"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	commitTime := time.Unix(epoch, 0).UTC()

	for _, p := range testPlatforms {
		t.Run(strings.ReplaceAll(p, "/", "-"), func(t *testing.T) {
			checkArchive(t, ctx, filepath.Join(dist, ArchiveName(version, p)), p, version, head, commitTime)
		})
	}

	// Again, from a clean clone elsewhere: the same bytes.
	again := makeRelease(t, ctx, clone, version, filepath.Join(t.TempDir(), "dist"))
	if again != sums {
		t.Errorf("not reproducible: a second release from a clone gave\n%s\nthe first\n%s", again, sums)
	}
}

func gitOut(t *testing.T, ctx context.Context, dir string, args ...string) string {
	t.Helper()
	out, err := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// file is one entry read back from an archive.
type file struct {
	name     string
	mode     os.FileMode
	modTime  time.Time
	uid, gid int
	owner    string // user and group names, "" when none
	data     []byte
}

func readTarGz(t *testing.T, path string) []file {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if gz.Name != "" || !gz.ModTime.IsZero() {
		t.Errorf("%s: gzip header holds name %q time %v: want neither", path, gz.Name, gz.ModTime)
	}
	tr := tar.NewReader(gz)
	var out []file
	for i := 0; i < 100; i++ {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, file{name: h.Name, mode: h.FileInfo().Mode(), modTime: h.ModTime, uid: h.Uid, gid: h.Gid, owner: h.Uname + h.Gname, data: data})
	}
	t.Fatalf("%s: more than 100 entries", path)
	return nil
}

func readZip(t *testing.T, path string) []file {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var out []file
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, file{name: f.Name, mode: f.Mode(), modTime: f.Modified, data: data})
	}
	return out
}

// checkArchive reads one archive back and checks what a user unpacks.
func checkArchive(t *testing.T, ctx context.Context, path, platform, version, revision string, commitTime time.Time) {
	goos, arch, _ := strings.Cut(platform, "/")
	var files []file
	if goos == "windows" {
		files = readZip(t, path)
	} else {
		files = readTarGz(t, path)
	}
	top := fmt.Sprintf("%s-%s.%s-%s/", Name, version, goos, arch)
	bin := Name
	if goos == "windows" {
		bin += ".exe"
	}
	wantNames := []string{top, top + "LICENSE", top + "README.md", top + "indexima.example.yml", top + bin}
	var names []string
	for _, f := range files {
		names = append(names, f.name)
	}
	if strings.Join(names, " ") != strings.Join(wantNames, " ") {
		t.Fatalf("entries %v, want %v", names, wantNames)
	}
	root := testkit.RepoRoot(t)
	var binary []byte
	for _, f := range files {
		wantMode := os.FileMode(0o644)
		switch f.name {
		case top:
			wantMode = os.ModeDir | 0o755
		case top + bin:
			wantMode = 0o755
			binary = f.data
		default:
			repoCopy, err := os.ReadFile(filepath.Join(root, strings.TrimPrefix(f.name, top)))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(f.data, repoCopy) {
				t.Errorf("%s differs from the repository's", f.name)
			}
		}
		if f.mode != wantMode {
			t.Errorf("%s: mode %v, want %v", f.name, f.mode, wantMode)
		}
		if !f.modTime.Equal(commitTime) {
			t.Errorf("%s: time %v, want the commit's %v", f.name, f.modTime.UTC(), commitTime)
		}
		if f.uid != 0 || f.gid != 0 || f.owner != "" {
			t.Errorf("%s: owner %d:%d %q, want 0:0 without names", f.name, f.uid, f.gid, f.owner)
		}
	}

	// The binary is for the platform, and names neither the build directory
	// (-trimpath) nor its builder.
	switch goos {
	case "windows":
		f, err := pe.NewFile(bytes.NewReader(binary))
		if err != nil || f.Machine != pe.IMAGE_FILE_MACHINE_AMD64 {
			t.Errorf("%s is not a Windows amd64 executable (%v)", bin, err)
		}
	default:
		f, err := elf.NewFile(bytes.NewReader(binary))
		want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[arch]
		if err != nil || f.Machine != want {
			t.Errorf("%s is not a %s ELF executable (%v)", bin, platform, err)
		}
	}
	for _, leak := range leaks(t, root) {
		if bytes.Contains(binary, []byte(leak)) {
			t.Errorf("the binary holds %q (build directory or user@host)", leak)
		}
	}
	unpacked := filepath.Join(t.TempDir(), bin)
	if err := os.WriteFile(unpacked, binary, 0o755); err != nil {
		t.Fatal(err)
	}
	info, err := exec.CommandContext(ctx, "go", "version", "-m", unpacked).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	for _, want := range []string{"-trimpath=true", "CGO_ENABLED=0", "GOOS=" + goos} {
		if !strings.Contains(string(info), want) {
			t.Errorf("go version -m lacks %s:\n%s", want, info)
		}
	}

	if platform != runtime.GOOS+"/"+runtime.GOARCH {
		return
	}
	out, err := exec.CommandContext(ctx, unpacked, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", bin, err, out)
	}
	for _, want := range []string{
		"indexima_exporter, version " + version + " ",
		"revision: " + revision + ")",
		"build user:       \n",
		"build date:       " + commitTime.Format("20060102-15:04:05") + "\n",
		"platform:         " + platform + "\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("--version lacks %q:\n%s", want, out)
		}
	}
}

// leaks are strings a reproducible binary must not hold: the absolute
// directory it was built in, and user@host as build tools stamp it.
func leaks(t *testing.T, root string) []string {
	out := []string{root}
	if u, err := user.Current(); err == nil {
		if h, err := os.Hostname(); err == nil {
			out = append(out, u.Username+"@"+h)
		}
	}
	return out
}
