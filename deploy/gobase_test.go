package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The Dockerfile compiles the exporter in a first stage FROM golang:1.26,
// which no registry here serves. The image tests build that stage FROM a
// local image instead, made of what the golang image holds that the
// Dockerfile uses: the host's Go toolchain at /usr/local/go and a /bin/sh.
// Modules come from the host's module cache through GOPROXY=file://, and
// the host's build cache is mounted, as a user's Docker would keep its
// layers: the build needs no network, and Go's caches never change what is
// built.

// goBuilderBase makes that image for the host's platform and returns its
// name; it is removed when the test ends.
func goBuilderBase(t *testing.T, b buildah) string {
	t.Helper()
	goroot := goEnv(t, "GOROOT")
	name := imageRepo + "-go:" + strconv.FormatInt(time.Now().UnixNano(), 36)
	ctr := b.must(time.Minute, "from", "--name", "gobase-"+strconv.FormatInt(time.Now().UnixNano(), 36), "scratch")
	t.Cleanup(func() { b.run(time.Minute, "rm", ctr) })
	b.must(5*time.Minute, "copy", ctr, goroot, "/usr/local/go")
	for dst, src := range shellFiles(t) {
		b.must(time.Minute, "copy", ctr, src, dst)
	}
	empty := t.TempDir()
	for _, dir := range []string{"/tmp", "/root"} {
		b.must(time.Minute, "copy", ctr, empty, dir)
	}
	b.must(time.Minute, "config", "--os", "linux", "--arch", runtime.GOARCH,
		"--env", "PATH=/usr/local/go/bin:/bin", "--env", "HOME=/root", "--env", "GOPATH=/go",
		"--env", "GOTOOLCHAIN=local", ctr)
	b.must(5*time.Minute, "commit", "--quiet", ctr, name)
	t.Cleanup(func() { b.run(time.Minute, "rmi", "-f", name) })
	return name
}

// shellFiles maps the paths of /bin/sh and of the libraries it loads (ldd)
// to the host files holding them, symbolic links resolved.
func shellFiles(t *testing.T) map[string]string {
	t.Helper()
	sh, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"/bin/sh": sh}
	out, err := exec.Command(tool(t, "ldd"), sh).Output()
	if err != nil {
		t.Fatalf("ldd %s: %v", sh, err)
	}
	// "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" or "/lib64/ld-linux-x86-64.so.2 (0x...)".
	for _, m := range regexp.MustCompile(`(?m)(/\S+) \(0x`).FindAllStringSubmatch(string(out), -1) {
		target, err := filepath.EvalSymlinks(m[1])
		if err != nil {
			t.Fatal(err)
		}
		files[m[1]] = target
	}
	if len(files) < 2 {
		t.Fatalf("ldd %s names no library:\n%s", sh, out)
	}
	return files
}

// goBuildEnv is what a build FROM goBuilderBase needs: the build arguments
// (GO_IMAGE, GOPROXY) and the flags of `buildah bud` that mount the host's
// module and build caches.
func goBuildEnv(t *testing.T, base string) (args map[string]string, budFlags []string) {
	t.Helper()
	modcache := filepath.Join(goEnv(t, "GOMODCACHE"), "cache", "download")
	if _, err := os.Stat(modcache); err != nil {
		t.Fatalf("the module cache: %v", err)
	}
	args = map[string]string{"GO_IMAGE": base, "GOPROXY": "file:///gomodcache"}
	budFlags = []string{"--isolation", "chroot", "--pull-never",
		"-v", modcache + ":/gomodcache:ro", "-v", goEnv(t, "GOCACHE") + ":/root/.cache/go-build"}
	return args, budFlags
}

func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	v := strings.TrimSpace(string(out))
	if err != nil || v == "" {
		t.Fatalf("go env %s: %q %v", name, v, err)
	}
	return v
}
