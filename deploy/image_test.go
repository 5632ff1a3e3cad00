package deploy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// The image test runs `make image` in a fresh clone, as a user does: the
// Dockerfile compiles the exporter in its first stage (FROM a local image
// holding the host's Go toolchain, see goBuilderBase), buildah builds one
// image per platform (no daemon, no registry) and gathers both in one
// manifest list. The final base, distroless by default, is replaced by
// scratch: the image then holds nothing but what the Dockerfile copies,
// which the test checks, down to the binary being the release build's
// (`make crossbuild` in the same clone) byte for byte.

const imageRepo = "localhost/indexima-exporter-test"

// imagePlatforms are the architectures of the manifest list.
var imagePlatforms = []string{"linux/amd64", "linux/arm64"}

// buildah runs buildah with the storage driver that works unprivileged in
// containers (vfs) and the chroot isolation (no runc, no namespaces needed).
type buildah struct {
	t   *testing.T
	bin string
}

const buildahGlobalFlags = "--storage-driver vfs"

func (b buildah) args(args ...string) []string {
	return append(strings.Fields(buildahGlobalFlags), args...)
}

func (b buildah) run(timeout time.Duration, args ...string) result {
	b.t.Helper()
	return run(b.t, timeout, testkit.RepoRoot(b.t), b.bin, b.args(args...)...)
}

func (b buildah) must(timeout time.Duration, args ...string) string {
	b.t.Helper()
	return strings.TrimSpace(mustRun(b.t, timeout, testkit.RepoRoot(b.t), b.bin, b.args(args...)...).stdout)
}

// ociImage is what `buildah inspect` says of a container's image.
type ociImage struct {
	OCIv1 struct {
		Architecture string `json:"architecture"`
		OS           string `json:"os"`
		Config       struct {
			User         string
			ExposedPorts map[string]struct{}
			Entrypoint   []string
			Cmd          []string
			Labels       map[string]string
		} `json:"config"`
	}
}

// needImageBuild skips (fails when CI is set) a test that builds images
// with buildah unless it runs as root; -short skips it.
func needImageBuild(t *testing.T, test, builds string) {
	t.Helper()
	if os.Getuid() != 0 {
		msg := test + " runs buildah as root (vfs storage, chroot isolation)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if testing.Short() {
		t.Skip("builds " + builds + " from source; skipped with -short")
	}
}

func TestImage(t *testing.T) {
	t.Parallel()
	needImageBuild(t, "the image test", "the images")
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	b := buildah{t: t, bin: tool(t, "buildah")}
	clone := testkit.CloneWorkingTree(t, ctx)
	version := fmt.Sprintf("0.0.0-imagetest.%d", time.Now().UnixNano())
	revision := strings.TrimSpace(mustRun(t, time.Minute, clone, tool(t, "git"), "rev-parse", "HEAD").stdout)

	image := imageRepo + ":" + strconv.FormatInt(time.Now().UnixNano(), 36)
	t.Cleanup(func() { removeManifestList(b, image) })
	args, budFlags := goBuildEnv(t, goBuilderBase(t, b))
	start := time.Now()
	mk := exec.CommandContext(ctx, tool(t, "make"), "--no-print-directory", "image",
		"IMAGE="+image, "VERSION="+version, "IMAGE_PLATFORMS="+strings.Join(imagePlatforms, ","))
	mk.Dir = clone
	// Not the parent make's flags or jobserver, if `make test` runs us.
	mk.Env = append(os.Environ(), "MAKEFLAGS=", "MFLAGS=", "MAKELEVEL=",
		"GO_IMAGE="+args["GO_IMAGE"], "GOPROXY="+args["GOPROXY"], "BASE_IMAGE=scratch",
		"BUILDAH="+b.bin, "BUILDAH_FLAGS="+buildahGlobalFlags, "BUD_FLAGS="+strings.Join(budFlags, " "))
	mk.WaitDelay = 5 * time.Second
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make image in a fresh clone: %v\n%s", err, out)
	}
	t.Logf("make image: %s", time.Since(start).Round(time.Millisecond))

	// The release build of the same commit and version, to compare with.
	buildDir := t.TempDir()
	mustRun(t, 10*time.Minute, clone, tool(t, "make"), "--no-print-directory", "crossbuild",
		"PLATFORMS="+strings.Join(imagePlatforms, ","), "BUILD_DIR="+buildDir, "VERSION="+version)

	// One manifest list, one image per platform.
	var list struct {
		Manifests []struct {
			Digest   string
			Platform struct{ Architecture, OS string }
		}
	}
	if err := json.Unmarshal([]byte(b.must(time.Minute, "manifest", "inspect", image)), &list); err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, m := range list.Manifests {
		listed = append(listed, m.Platform.OS+"/"+m.Platform.Architecture)
	}
	sort.Strings(listed)
	if strings.Join(listed, " ") != strings.Join(imagePlatforms, " ") {
		t.Fatalf("manifest list %s holds %v, want %v", image, listed, imagePlatforms)
	}

	var defaultPort string
	for _, p := range imagePlatforms {
		goos, arch, _ := strings.Cut(p, "/")
		ctr := b.must(time.Minute, "from", "--pull-never", "--os", goos, "--arch", arch, image)
		t.Cleanup(func() { b.run(time.Minute, "rm", ctr) })
		var img ociImage
		if err := json.Unmarshal([]byte(b.must(time.Minute, "inspect", "--type", "container", ctr)), &img); err != nil {
			t.Fatal(err)
		}
		cfg := img.OCIv1.Config
		if img.OCIv1.OS+"/"+img.OCIv1.Architecture != p {
			t.Errorf("%s: the image is for %s/%s", p, img.OCIv1.OS, img.OCIv1.Architecture)
		}
		uid, _, _ := strings.Cut(cfg.User, ":")
		if n, err := strconv.Atoi(uid); err != nil || n == 0 {
			t.Errorf("%s: USER %q: want a numeric non-root uid (Kubernetes' runAsNonRoot can only verify a number)", p, cfg.User)
		}
		if want := []string{"/bin/indexima_exporter"}; fmt.Sprint(cfg.Entrypoint) != fmt.Sprint(want) {
			t.Errorf("%s: ENTRYPOINT %q, want %q", p, cfg.Entrypoint, want)
		}
		if len(cfg.Cmd) != 1 || !strings.HasPrefix(cfg.Cmd[0], "--config.file=") {
			t.Errorf("%s: CMD %q, want the --config.file flag", p, cfg.Cmd)
		}
		for label, want := range map[string]string{
			"org.opencontainers.image.source":   "https://github.com/indexima-exporter/indexima_exporter",
			"org.opencontainers.image.version":  version,
			"org.opencontainers.image.revision": revision,
			"org.opencontainers.image.licenses": "Apache-2.0",
		} {
			if got := cfg.Labels[label]; got != want {
				t.Errorf("%s: label %s = %q, want %q", p, label, got, want)
			}
		}
		if cfg.Labels["org.opencontainers.image.description"] == "" {
			t.Errorf("%s: no org.opencontainers.image.description label", p)
		}
		checkImageFiles(t, b, ctr, p, filepath.Join(buildDir, goos+"-"+arch, "indexima_exporter"))

		if p != "linux/amd64" {
			continue // no emulator here: the arm64 image is checked by its files
		}
		// The binary in the image is ours, with the version it was built with.
		out := b.must(time.Minute, "run", "--isolation", "chroot", ctr, "--", "/bin/indexima_exporter", "--version")
		if !strings.Contains(out, "version "+version+" ") {
			t.Errorf("--version printed %q, want version %s", out, version)
		}
		// EXPOSE agrees with the binary's own default listen address.
		help := b.run(time.Minute, "run", "--isolation", "chroot", ctr, "--", "/bin/indexima_exporter", "--help")
		m := regexp.MustCompile(`--web\.listen-address=:(\d+)`).FindStringSubmatch(help.stdout + help.stderr)
		if m == nil {
			t.Fatalf("--help shows no default --web.listen-address:\n%s", help)
		}
		defaultPort = m[1]
		if _, ok := cfg.ExposedPorts[m[1]+"/tcp"]; !ok || len(cfg.ExposedPorts) != 1 {
			t.Errorf("EXPOSE %v, want only %s/tcp, the exporter's default port", cfg.ExposedPorts, m[1])
		}
		// The image serves metrics in demo mode, as its non-root user.
		runDemo(t, b, ctr, version, nil, "--demo", "--web.listen-address=127.0.0.1:0")
	}
	if defaultPort == "" {
		t.Error("no linux/amd64 image was run")
	}
}

// checkImageFiles mounts the container's file system and requires exactly
// the licence and the binary of the release build, byte for byte: no
// compiler, no shell, nothing else from the build stage.
func checkImageFiles(t *testing.T, b buildah, ctr, platform, crossBuilt string) {
	t.Helper()
	mnt := b.must(time.Minute, "mount", ctr)
	defer b.run(time.Minute, "umount", ctr)
	var files []string
	err := filepath.WalkDir(mnt, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(mnt, path)
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	if want := []string{"LICENSE", "bin/indexima_exporter"}; strings.Join(files, " ") != strings.Join(want, " ") {
		t.Errorf("%s: the image holds %v, want only %v", platform, files, want)
	}
	inImage, err := os.ReadFile(filepath.Join(mnt, "bin", "indexima_exporter"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(crossBuilt)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(inImage, want) {
		t.Errorf("%s: /bin/indexima_exporter is not the release build %s (make crossbuild, same commit and version): the Dockerfile builds otherwise than scripts/release", platform, crossBuilt)
	}
	license, err := os.ReadFile(filepath.Join(mnt, "LICENSE"))
	if err != nil || !bytes.Contains(license, []byte("Apache License")) {
		t.Errorf("%s: /LICENSE is not the Apache licence (%v)", platform, err)
	}
}

// removeManifestList removes the list and the images it holds.
func removeManifestList(b buildah, image string) {
	var list struct{ Manifests []struct{ Digest string } }
	r := b.run(time.Minute, "manifest", "inspect", image)
	_ = json.Unmarshal([]byte(r.stdout), &list)
	digests := map[string]bool{}
	for _, m := range list.Manifests {
		digests[m.Digest] = true
	}
	b.run(time.Minute, "manifest", "rm", image)
	imgs := b.run(time.Minute, "images", "--all", "--digests", "--no-trunc", "--format", "{{.ID}} {{.Digest}}")
	for _, line := range strings.Split(imgs.stdout, "\n") {
		if f := strings.Fields(line); len(f) == 2 && digests[f[1]] {
			b.run(time.Minute, "rmi", "-f", f[0])
		}
	}
}

// runDemo runs the image's exporter with args (--demo and a listen address
// of 127.0.0.1:0 among them) and waits until /metrics answers with Indexima
// series and the build version, then stops it and checks that nothing is
// left listening. The test reads the port the exporter got from its log: a
// port found free beforehand and handed over could be taken by a parallel
// test before it binds it. runOpts are options of buildah run (volumes).
func runDemo(t *testing.T, b buildah, ctr, version string, runOpts []string, args ...string) {
	t.Helper()
	logFile := filepath.Join(t.TempDir(), "exporter.log")
	lf, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	run := append(append([]string{"run", "--isolation", "chroot"}, runOpts...), ctr, "--", "/bin/indexima_exporter")
	cmd := exec.Command(b.bin, b.args(append(run, args...)...)...)
	cmd.Stdout, cmd.Stderr = lf, lf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var exitErr error // set once done is closed
	go func() { exitErr = cmd.Wait(); close(done) }()
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
	addr, err := testkit.WaitListening(logs, done, 90*time.Second)
	if err != nil {
		select {
		case <-done:
			stopped = true
			t.Fatalf("the exporter: %v (exit: %v)\n%s", err, exitErr, logs())
		default:
			t.Fatalf("the exporter: %v\n%s", err, logs())
		}
	}

	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(90 * time.Second)
	var body string
	for {
		select {
		case <-done:
			stopped = true
			t.Fatalf("the exporter exited before serving: %v\n%s", exitErr, logs())
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
	uid, inode := listener(addr)
	switch uid {
	case "":
		t.Errorf("no listening socket on %s in /proc/net/tcp", addr)
	case "0":
		t.Errorf("the exporter in the image runs as root")
	}
	stop()
	// Nothing may survive the container: its listening socket is gone. (Not
	// "the port refuses connections": once free, a parallel test may take it.)
	if inode == "" {
		return
	}
	deadline = time.Now().Add(20 * time.Second)
	for {
		if _, now := listener(addr); now != inode {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the exporter's socket on %s still listens after the container stopped", addr)
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

// listener finds the listening socket on addr (127.0.0.1:port) in
// /proc/net/tcp: its owner's uid and its inode, "" when there is none.
func listener(addr string) (uid, inode string) {
	_, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	data, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return "", ""
	}
	want := fmt.Sprintf("0100007F:%04X", p)
	for _, line := range strings.Split(string(data), "\n")[1:] {
		f := strings.Fields(line)
		// sl local rem st tx:rx tr:when retrnsmt uid timeout inode; st 0A is LISTEN.
		if len(f) > 9 && f[1] == want && f[3] == "0A" {
			return f[7], f[9]
		}
	}
	return "", ""
}
