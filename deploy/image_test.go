package deploy

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The image test builds the Dockerfile with buildah (no daemon, no registry):
// the base images, normally golang:1.26-bookworm and distroless, are replaced
// through the Dockerfile's build arguments by local ones, a Go builder made
// from this machine's toolchain and module cache, and scratch.

const (
	builderRepo = "localhost/indexima-exporter-test-gobuilder"
	imageRepo   = "localhost/indexima-exporter-test"
)

// buildah runs buildah with the storage driver that works unprivileged in
// containers (vfs) and the chroot isolation (no runc, no namespaces needed).
type buildah struct {
	t   *testing.T
	bin string
}

func (b buildah) args(args ...string) []string {
	return append([]string{"--storage-driver", "vfs"}, args...)
}

func (b buildah) run(timeout time.Duration, args ...string) result {
	b.t.Helper()
	return run(b.t, timeout, repoRoot(b.t), b.bin, b.args(args...)...)
}

func (b buildah) must(timeout time.Duration, args ...string) string {
	b.t.Helper()
	return strings.TrimSpace(mustRun(b.t, timeout, repoRoot(b.t), b.bin, b.args(args...)...).stdout)
}

func TestImage(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		msg := "the image test runs buildah as root (vfs storage, chroot isolation)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	b := buildah{t: t, bin: tool(t, "buildah")}
	goBuilder := builderBase(t, b)

	version := fmt.Sprintf("0.0.0-imagetest.%d", time.Now().UnixNano())
	image := imageRepo + ":" + strconv.FormatInt(time.Now().UnixNano(), 36)
	t.Cleanup(func() { b.run(time.Minute, "rmi", "-f", image) })
	start := time.Now()
	r := b.run(10*time.Minute, "bud", "--isolation", "chroot",
		"--build-arg", "GO_IMAGE="+goBuilder,
		"--build-arg", "BASE_IMAGE=scratch",
		"--build-arg", "VERSION="+version,
		"--build-arg", "REVISION=imagetest",
		"-f", "Dockerfile", "-t", image, ".")
	if r.err != nil {
		t.Fatalf("buildah bud: %v\n%s", r.err, r)
	}
	t.Logf("image built in %s", time.Since(start).Round(time.Second))

	var inspected struct {
		OCIv1 struct {
			Config struct {
				User         string
				ExposedPorts map[string]struct{}
				Entrypoint   []string
				Cmd          []string
			} `json:"config"`
		}
	}
	if err := json.Unmarshal([]byte(b.must(time.Minute, "inspect", "--type", "image", image)), &inspected); err != nil {
		t.Fatal(err)
	}
	cfg := inspected.OCIv1.Config
	uid, _, _ := strings.Cut(cfg.User, ":")
	if n, err := strconv.Atoi(uid); err != nil || n == 0 {
		t.Errorf("image USER %q: want a numeric non-root uid (Kubernetes' runAsNonRoot can only verify a number)", cfg.User)
	}
	if want := []string{"/bin/indexima_exporter"}; fmt.Sprint(cfg.Entrypoint) != fmt.Sprint(want) {
		t.Errorf("ENTRYPOINT %q, want %q", cfg.Entrypoint, want)
	}
	if len(cfg.Cmd) != 1 || !strings.HasPrefix(cfg.Cmd[0], "--config.file=") {
		t.Errorf("CMD %q, want the --config.file flag", cfg.Cmd)
	}

	ctr := b.must(time.Minute, "from", "--pull-never", image)
	t.Cleanup(func() { b.run(time.Minute, "rm", ctr) })

	// The binary in the image is ours, with the version of the build arguments.
	out := b.must(time.Minute, "run", "--isolation", "chroot", ctr, "--", "/bin/indexima_exporter", "--version")
	if !strings.Contains(out, version) {
		t.Errorf("--version printed %q, want version %s from the build arguments", out, version)
	}
	// EXPOSE agrees with the binary's own default listen address.
	help := b.run(time.Minute, "run", "--isolation", "chroot", ctr, "--", "/bin/indexima_exporter", "--help")
	m := regexp.MustCompile(`--web\.listen-address=:(\d+)`).FindStringSubmatch(help.stdout + help.stderr)
	if m == nil {
		t.Fatalf("--help shows no default --web.listen-address:\n%s", help)
	}
	if _, ok := cfg.ExposedPorts[m[1]+"/tcp"]; !ok || len(cfg.ExposedPorts) != 1 {
		t.Errorf("EXPOSE %v, want only %s/tcp, the exporter's default port", cfg.ExposedPorts, m[1])
	}

	// The image serves metrics in demo mode, as its non-root user.
	addr := freeLoopbackAddr(t)
	runDemo(t, b, ctr, addr, version)
}

// runDemo runs the image's exporter with --demo on addr and waits until
// /metrics answers with Indexima series and the build version, then stops it
// and checks that nothing is left listening.
func runDemo(t *testing.T, b buildah, ctr, addr, version string) {
	t.Helper()
	logFile := filepath.Join(t.TempDir(), "exporter.log")
	lf, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	cmd := exec.Command(b.bin, b.args("run", "--isolation", "chroot", ctr, "--",
		"/bin/indexima_exporter", "--demo", "--web.listen-address="+addr)...)
	cmd.Stdout, cmd.Stderr = lf, lf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		// SIGTERM: buildah passes it on to the exporter (SIGKILL would orphan it).
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Error("buildah run did not stop within 20s of SIGTERM")
		}
	}
	defer stop()
	logs := func() string { data, _ := os.ReadFile(logFile); return string(data) }

	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(90 * time.Second)
	var body string
	for {
		select {
		case err := <-done:
			stopped = true
			t.Fatalf("the exporter exited before serving: %v\n%s", err, logs())
		default:
		}
		body = ""
		if resp, err := client.Get("http://" + addr + "/metrics"); err == nil {
			data, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				body = string(data)
			}
		}
		if hasSeries(body, "indexima_up") && hasSeries(body, "indexima_events_total") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no indexima_ series on http://%s/metrics after 90s\nlast body (%d bytes):\n%.2000s\nlogs:\n%s", addr, len(body), body, logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("the image's exporter served %d bytes of metrics in demo mode", len(body))
	if !strings.Contains(body, `version="`+version+`"`) {
		t.Errorf("indexima_exporter_build_info lacks version=%q", version)
	}
	for _, path := range []string{"/-/healthy", "/-/ready"} {
		waitHTTP(t, "http://"+addr+path, 30*time.Second, logs)
	}
	// chroot isolation shares the host's network: the socket is in /proc/net/tcp.
	switch uid := processUID(t, addr); uid {
	case "":
		t.Errorf("no listening socket on %s in /proc/net/tcp", addr)
	case "0":
		t.Errorf("the exporter in the image runs as root")
	}
	stop()
	// Nothing may survive the container: the port is free again.
	deadline = time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatalf("%s still accepts connections after the container stopped", addr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// hasSeries reports whether the exposition text has a sample of the metric.
func hasSeries(body, metric string) bool {
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, metric+"{") || strings.HasPrefix(line, metric+" ") {
			return true
		}
	}
	return false
}

// processUID finds the uid of the process listening on addr through
// /proc/net/tcp (the socket's owner), "" when it cannot tell.
func processUID(t *testing.T, addr string) string {
	t.Helper()
	_, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	data, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return ""
	}
	want := fmt.Sprintf("0100007F:%04X", p)
	for _, line := range strings.Split(string(data), "\n")[1:] {
		f := strings.Fields(line)
		// sl local rem st ... uid; st 0A is LISTEN.
		if len(f) > 7 && f[1] == want && f[3] == "0A" {
			return f[7]
		}
	}
	return ""
}

// builderBase returns a local image that stands in for golang:1.26-bookworm:
// this machine's Go toolchain, the modules go.mod needs (GOPROXY=off inside)
// and a shell for RUN. It is kept between runs, keyed by Go version and
// go.sum, since making it copies a few hundred megabytes.
func builderBase(t *testing.T, b buildah) string {
	t.Helper()
	root := repoRoot(t)
	goroot := strings.TrimSpace(mustRun(t, time.Minute, root, "go", "env", "GOROOT").stdout)
	gover := strings.TrimSpace(mustRun(t, time.Minute, root, "go", "env", "GOVERSION").stdout)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", gover, goroot)
	h.Write(mod)
	h.Write(sum)
	name := builderRepo + ":" + hex.EncodeToString(h.Sum(nil))[:16]
	if b.run(time.Minute, "inspect", "--type", "image", name).err == nil {
		t.Logf("reusing builder base %s", name)
		return name
	}
	// Builders made for another go.mod or Go version are of no further use.
	if out := b.run(time.Minute, "images", "--format", "{{.Name}}:{{.Tag}}", builderRepo); out.err == nil {
		for _, old := range strings.Fields(out.stdout) {
			if old != name {
				b.run(time.Minute, "rmi", "-f", old)
			}
		}
	}
	start := time.Now()

	// The modules of go.mod, taken from this machine's module cache (a file://
	// proxy), falling back to the configured proxy for any it lacks.
	tmp := t.TempDir()
	modcache := filepath.Join(tmp, "mod")
	hostCache := strings.TrimSpace(mustRun(t, time.Minute, root, "go", "env", "GOMODCACHE").stdout)
	hostProxy := strings.TrimSpace(mustRun(t, time.Minute, root, "go", "env", "GOPROXY").stdout)
	dl := exec.Command("go", "mod", "download")
	dl.Dir = root
	dl.Env = append(os.Environ(), "GOMODCACHE="+modcache, "GOFLAGS=-mod=mod",
		"GOPROXY=file://"+filepath.Join(hostCache, "cache", "download")+","+hostProxy)
	if out, err := dl.CombinedOutput(); err != nil {
		t.Fatalf("go mod download into the builder's module cache: %v\n%s", err, out)
	}
	// The module cache is read-only; buildah copy keeps modes, which is fine,
	// but t.TempDir's cleanup needs write access.
	t.Cleanup(func() { _ = exec.Command("chmod", "-R", "u+w", modcache).Run() })

	ctr := b.must(time.Minute, "from", "scratch")
	defer b.run(time.Minute, "rm", ctr)
	copyIn := func(src, dst string) {
		b.must(5*time.Minute, "copy", ctr, src, dst)
	}
	for _, d := range []string{"bin", "pkg", "src", "lib"} {
		copyIn(filepath.Join(goroot, d), "/usr/local/go/"+d)
	}
	for _, f := range []string{"go.env", "VERSION"} {
		if _, err := os.Stat(filepath.Join(goroot, f)); err == nil {
			copyIn(filepath.Join(goroot, f), "/usr/local/go/"+f)
		}
	}
	copyIn(modcache, "/go/pkg/mod")
	// RUN needs /bin/sh: dash and the libraries it links.
	sh, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	copyIn(sh, "/bin/sh")
	for _, lib := range sharedLibs(t, sh) {
		copyIn(lib, lib)
	}
	empty := filepath.Join(tmp, "empty")
	if err := os.Mkdir(empty, 0o1777); err != nil {
		t.Fatal(err)
	}
	copyIn(empty, "/tmp")
	b.must(time.Minute, "config",
		"--env", "PATH=/usr/local/go/bin:/go/bin:/bin",
		"--env", "GOPATH=/go",
		"--env", "GOTOOLCHAIN=local",
		"--env", "GOPROXY=off",
		"--env", "GOFLAGS=-mod=mod",
		"--env", "HOME=/root",
		"--workingdir", "/go",
		ctr)
	b.must(5*time.Minute, "commit", "--rm", ctr, name)
	t.Logf("builder base %s made in %s", name, time.Since(start).Round(time.Second))
	return name
}

// sharedLibs lists the shared libraries a program loads (from ldd).
func sharedLibs(t *testing.T, prog string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ldd", prog).Output()
	if err != nil {
		return nil // static
	}
	var libs []string
	for _, line := range strings.Split(string(out), "\n") {
		for _, f := range strings.Fields(line) {
			if strings.HasPrefix(f, "/") {
				libs = append(libs, f)
			}
		}
	}
	return libs
}
