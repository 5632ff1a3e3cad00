package program

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runOnce runs the program with args until it returns (error paths and
// one-shot modes: they must return without a signal); one that serves
// instead is stopped after a minute rather than hanging the test.
func runOnce(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	code = run(ctx, args, &out, &errb, make(chan os.Signal))
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Every failure a user can cause ends with one clear line on stderr and a
// non-zero status, never a stack trace or a usage dump.
func TestUserErrorsGiveOneLine(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good.yml", "console: {url: 'http://127.0.0.1:1'}\nnodes: [{host: a}]\n")
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	if err := os.Mkdir(filepath.Join(dir, "pwdir"), 0o700); err != nil {
		t.Fatal(err)
	}
	file := func(name, content string) string { return "--config.file=" + writeFile(t, dir, name, content) }
	cases := []struct {
		name string
		args []string
		want string // in the one line
	}{
		{"bad flag", []string{"--no-such-flag"}, "unknown long flag '--no-such-flag'"},
		{"bad flag value", []string{"--scrape.concurrency=many"}, `--scrape.concurrency: "many" is not a number`},
		{"zero concurrency", []string{"--scrape.concurrency=0"}, "--scrape.concurrency and --label.max-values must be at least 1"},
		{"negative label bound", []string{"--label.max-values=-1"}, "must be at least 1"},
		{"bad log level", []string{"--log.level=loud"}, "log.level"},
		{"unexpected argument", []string{"extra"}, "unexpected extra"},
		{"file missing", []string{"--config.file=" + filepath.Join(dir, "none.yml")}, `none.yml": file not found`},
		{"bad yaml", []string{file("bad.yml", "console: [\n")}, "bad.yml"},
		{"unknown key", []string{file("unknown.yml", "console: {url: 'http://c:1'}\nnodes: [{host: a}]\nfoo: 1\n")}, `line 3: unknown key "foo"`},
		{"bad url", []string{file("url.yml", "console: {url: 'ftp://c'}\nnodes: [{host: a}]\n")}, `console.url: "ftp://c": scheme "ftp" not supported`},
		{"url without scheme", []string{file("noscheme.yml", "console: {url: 127.0.0.1:18082}\nnodes: [{host: a}]\n")}, "console.url: not a valid URL; did you mean http://127.0.0.1:18082?"},
		{"no nodes", []string{file("nonodes.yml", "console: {url: 'http://c:1'}\n")}, "nodes: no node configured"},
		{"duplicate node names", []string{file("dup.yml", "console: {url: 'http://c:1'}\nnodes: [{host: a, name: x}, {host: b, name: x}]\n")}, `duplicate node name "x"`},
		{"unreadable password file", []string{file("pw.yml", "console: {url: 'http://c:1', username: u, password_file: pwdir}\nnodes: [{host: a}]\n")}, "password_file"},
		{"port taken", []string{"--config.file=" + good, "--web.listen-address=" + taken.Addr().String()}, "address already in use"},
		{"bad listen address", []string{"--config.file=" + good, "--web.listen-address=nohost-:x"}, "--web.listen-address"},
		{"web config missing", []string{"--config.file=" + good, "--web.config.file=" + filepath.Join(dir, "web-none.yml")}, "web config file"},
		{"bad telemetry path", []string{"--config.file=" + good, "--web.telemetry-path=metrics"}, "--web.telemetry-path"},
		{"check with demo", []string{"--demo", "--config.check"}, "--config.check"},
		{"state file and no config", []string{"--config.file=" + filepath.Join(dir, "none.yml"), "--events.state-file=" + filepath.Join(dir, "state.json")}, "file not found"},
		{"telemetry path taken", []string{"--config.file=" + good, "--web.telemetry-path=/probe"}, "--web.telemetry-path"},
		{"event log rotated too small", []string{"--config.file=" + good, "--events.log.max-size=64KiB"}, "--events.log.max-size must be at least 1MiB"},
		{"event log without backups", []string{"--config.file=" + good, "--events.log.max-backups=0"}, "--events.log.max-backups at least 1"},
		{"event log not writable", []string{"--config.file=" + good, "--events.log=" + filepath.Join(dir, "none", "events.log")}, `--events.log "` + filepath.Join(dir, "none", "events.log") + `": cannot write there: no such file or directory`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runOnce(t, tc.args...)
			if code == 0 {
				t.Errorf("exit status 0, want non-zero")
			}
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], Name+": ") {
				t.Errorf("stderr is not one line starting with %q:\n%s", Name+": ", stderr)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q does not contain %q", stderr, tc.want)
			}
			for _, bad := range []string{"goroutine", "panic", "usage:", "Flags:"} {
				if strings.Contains(stderr+stdout, bad) {
					t.Errorf("output holds %q:\n%s%s", bad, stdout, stderr)
				}
			}
		})
	}
}

func TestConfigCheck(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good.yml", "console: {url: 'http://c:1'}\nnodes: [{host: a}, {host: b}]\n")
	code, stdout, stderr := runOnce(t, "--config.check", "--config.file="+good)
	if code != 0 || stderr != "" || !strings.Contains(stdout, "is valid: 1 cluster(s), 2 node(s)") {
		t.Errorf("good file: status %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	bad := writeFile(t, dir, "bad.yml", "console: {url: 'ftp://c', timeout: 0s}\nnodes: [{host: a, port: 0}]\n")
	code, stdout, stderr = runOnce(t, "--config.check", "--config.file="+bad)
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	if code != 1 || stdout != "" || len(lines) != 3 {
		t.Fatalf("bad file: status %d, stdout %q, want 1 and three lines (url, timeout, port) on stderr:\n%s", code, stdout, stderr)
	}
	for i, want := range []string{"console.url", "console.timeout", "nodes[0].port"} {
		if !strings.HasPrefix(lines[i], Name+`: config file "`+bad+`": `+want) {
			t.Errorf("line %d = %q, want the file then %s", i, lines[i], want)
		}
	}
}

func TestVersionAndHelpExitZero(t *testing.T) {
	code, stdout, stderr := runOnce(t, "--version")
	if code != 0 || !strings.Contains(stdout, Name+", version") || stderr != "" {
		t.Errorf("--version: status %d stdout %q stderr %q", code, stdout, stderr)
	}
	code, stdout, _ = runOnce(t, "--help")
	if code != 0 {
		t.Errorf("--help: status %d", code)
	}
	// Boolean flags show as --[no-]name.
	for _, flag := range []string{"--web.listen-address", "--web.config.file", "--web.telemetry-path", "--config.file",
		"config.check", "demo", "--events.state-file", "--scrape.concurrency", "--label.max-values",
		"--log.level", "--log.format", "version", ":" + DefaultPort} {
		if !strings.Contains(stdout, flag) {
			t.Errorf("--help does not mention %s", flag)
		}
	}
}
