package deploy

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// readmeComposeRE is the README's one command that starts the stack, run
// from the root of a clone.
var readmeComposeRE = regexp.MustCompile(`(?m)^[ \t]*docker compose -f (\S+) up --build$`)

// TestComposeCommandFromAFreshClone runs what the README's compose command
// runs, on a fresh clone with nothing built beforehand: docker-compose
// resolves the stack, and the exporter's service is built from its build
// section (context, Dockerfile, build arguments) and started with its
// command. No Docker daemon here: the build runs with buildah, as make
// image does, FROM local bases (goBuilderBase for golang, scratch for
// distroless: no registry here); and the exporter listens on 127.0.0.1:0
// instead of the published :9897, which a parallel test could hold. The
// other services are images of Prometheus, Alertmanager and Grafana, whose
// mounted files TestComposeStack and TestComposePrometheusConfig check.
func TestComposeCommandFromAFreshClone(t *testing.T) {
	t.Parallel()
	needImageBuild(t, "the compose build test", "the exporter's image")
	readme, err := os.ReadFile(filepath.Join(testkit.RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := readmeComposeRE.FindSubmatch(readme)
	if m == nil {
		t.Fatalf("the README gives no `docker compose -f FILE up --build` line (%s)", readmeComposeRE)
	}
	composeFile := string(m[1])

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	clone := testkit.CloneWorkingTree(t, ctx)
	if _, err := os.Stat(filepath.Join(clone, composeFile)); err != nil {
		t.Fatalf("the README's compose file: %v", err)
	}
	r := mustRun(t, time.Minute, clone, tool(t, "docker-compose"), "-f", composeFile, "config")
	var stack object
	if err := yaml.Unmarshal([]byte(r.stdout), &stack); err != nil {
		t.Fatalf("docker-compose config: %v", err)
	}
	exp := dig(stack, "services", "exporter")
	if exp == nil {
		t.Fatalf("no exporter service in %s", composeFile)
	}
	buildCtx := str(dig(exp, "build", "context"))
	if !strings.HasPrefix(buildCtx, clone) {
		t.Fatalf("the exporter's build context %q is not in the clone %s", buildCtx, clone)
	}
	dockerfile := filepath.Join(buildCtx, str(dig(exp, "build", "dockerfile")))

	b := buildah{t: t, bin: tool(t, "buildah")}
	goArgs, budFlags := goBuildEnv(t, goBuilderBase(t, b))
	image := imageRepo + ":compose-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	t.Cleanup(func() { b.run(time.Minute, "rmi", "-f", image) })
	bud := append([]string{"bud"}, budFlags...)
	bud = append(bud, "-t", image, "-f", dockerfile)
	// The service's own build arguments, then what stands in for the
	// registry and for BuildKit (which sets BUILDPLATFORM; buildah 1.28 does not).
	buildArgs, _ := dig(exp, "build", "args").(object)
	for k, v := range buildArgs {
		bud = append(bud, "--build-arg", k+"="+str(v))
	}
	for k, v := range goArgs {
		bud = append(bud, "--build-arg", k+"="+v)
	}
	bud = append(bud, "--build-arg", "BASE_IMAGE=scratch", "--build-arg", "BUILDPLATFORM=linux/"+goEnv(t, "GOARCH"), buildCtx)
	start := time.Now()
	b.must(15*time.Minute, bud...)
	t.Logf("the exporter's image built from the clone in %s", time.Since(start).Round(time.Millisecond))

	// Nothing passed the version: the build stamps the VERSION file's.
	data, err := os.ReadFile(filepath.Join(clone, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(data))
	var args []string
	for _, a := range stringList(dig(exp, "command")) {
		if strings.HasPrefix(a, "--web.listen-address=") {
			a = "--web.listen-address=127.0.0.1:0"
		}
		args = append(args, a)
	}
	if !strings.Contains(strings.Join(args, " "), "--web.listen-address=127.0.0.1:0") {
		t.Fatalf("the exporter's command %v sets no --web.listen-address", args)
	}
	ctr := b.must(time.Minute, "from", "--pull-never", image)
	t.Cleanup(func() { b.run(time.Minute, "rm", ctr) })
	out := b.must(time.Minute, "run", "--isolation", "chroot", ctr, "--", "/bin/indexima_exporter", "--version")
	if !strings.Contains(out, "version "+version+" ") || !strings.Contains(out, "revision: unknown") {
		t.Errorf("--version of the compose build printed %q, want version %s and revision unknown (no .git in the context)", out, version)
	}
	// The service's volumes (the event log's): a directory each, owned by
	// the image's user as the stack's volume is.
	var runOpts []string
	uid, err := strconv.Atoi(imageUID(t))
	if err != nil {
		t.Fatal(err)
	}
	volumeDirs := map[string]string{}
	for _, m := range mounts(t, exp) {
		if !m.named {
			continue
		}
		dir := t.TempDir()
		if err := os.Chown(dir, uid, uid); err != nil {
			t.Fatalf("a directory for volume %s: %v", m.source, err)
		}
		volumeDirs[m.target] = dir
		runOpts = append(runOpts, "--volume", dir+":"+m.target)
	}
	runDemo(t, b, ctr, version, runOpts, args...)
	// The exporter wrote its event log into the volume Alloy reads.
	if logPath := flagValue(args, "events.log"); logPath != "" {
		m, ok := mountOf(t, exp, logPath)
		if !ok {
			t.Fatalf("--events.log=%s is on no volume of the service", logPath)
		}
		if _, err := os.Stat(filepath.Join(volumeDirs[m.target], strings.TrimPrefix(logPath, m.target))); err != nil {
			t.Errorf("the exporter of the compose build wrote no event log in its volume: %v", err)
		}
	}
}
