package program

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/indexima-exporter/indexima_exporter/store"
)

// A state file another process holds stops the start with one line naming
// the path and the holder, before anything of the state is read; here the
// holder is this test process, through the store's own lock.
func TestAStateFileInUseStopsTheStart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	held, _, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	manifest, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := writeFile(t, dir, "c.yml", "console: {url: 'http://127.0.0.1:1'}\nnodes: [{host: a}]\n")
	code, stdout, stderr := runOnce(t, "--config.file="+cfg, "--events.state-file="+path, "--web.listen-address=127.0.0.1:0")
	host, _ := os.Hostname()
	want := fmt.Sprintf("%s: --events.state-file: state file %q is in use by another process, pid %d on host %s, which holds the lock on %q: "+
		"one process per state file; stop that process, or give this one a state file of its own\n", Name, path, os.Getpid(), host, path+".lock")
	if code != exitError || stdout != "" || stderr != want {
		t.Errorf("status %d, stdout %q, stderr\n %q\nwant 1 and\n %q", code, stdout, stderr, want)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != string(manifest) {
		t.Errorf("the manifest changed under its holder: %v", err)
	}
}

// --config.check reads no state: it neither takes the lock nor minds that
// another process holds it, and leaves no lock file behind.
func TestConfigCheckTakesNoLock(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "c.yml", "console: {url: 'http://127.0.0.1:1'}\nnodes: [{host: a}]\n")
	held := filepath.Join(dir, "held.json")
	st, _, err := store.Open(held)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if code, _, stderr := runOnce(t, "--config.check", "--config.file="+cfg, "--events.state-file="+held); code != 0 {
		t.Errorf("--config.check with the state file held: status %d, %s", code, stderr)
	}
	fresh := filepath.Join(dir, "state", "fresh.json")
	if err := os.Mkdir(filepath.Dir(fresh), 0o700); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runOnce(t, "--config.check", "--config.file="+cfg, "--events.state-file="+fresh); code != 0 {
		t.Errorf("--config.check: status %d, %s", code, stderr)
	}
	if got := dirNames(t, filepath.Dir(fresh)); len(got) != 0 {
		t.Errorf("--config.check wrote %v beside the state file", got)
	}
}

// The saved state of a node the configuration no longer has is dropped and
// named once: at start (a state written under another configuration) and
// at the reload that removes the node.
func TestDroppedNodeStatesAreNamedOnce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	writeFile(t, dir, "state.json", `{"version":2,"nodes":{`+
		`"/a:9999":{"contacted":true,"cursor":100},"/b:9999":{"contacted":true,"cursor":200},"/c:9999":{"contacted":true,"cursor":300}}}`)
	config := func(nodes string) {
		writeFile(t, dir, "indexima.yml", "console: {url: 'http://127.0.0.1:1'}\nnodes: "+nodes+"\n")
	}
	config("[{host: a, port: 9999}, {host: b, port: 9999}]")
	r := start(t, "--config.file="+filepath.Join(dir, "indexima.yml"), "--events.state-file="+path)
	const msg = `msg="saved state of a node no longer configured dropped; configured again, it starts from its first contact"`
	dropped := func() []string {
		var out []string
		for _, l := range strings.Split(r.stderr.String(), "\n") {
			if strings.Contains(l, msg) {
				out = append(out, l[strings.Index(l, " node=")+1:])
			}
		}
		return out
	}
	if got := dropped(); len(got) != 1 || got[0] != "node=/c:9999" {
		t.Fatalf("at start: dropped %q, want node /c:9999 once\n%s", got, r.stderr)
	}
	config("[{host: a, port: 9999}]")
	if code, body := r.do("POST", "/-/reload"); code != 200 {
		t.Fatalf("reload: %d %s", code, body)
	}
	if code, body := r.do("POST", "/-/reload"); code != 200 {
		t.Fatalf("reload: %d %s", code, body)
	}
	if got := dropped(); len(got) != 2 || got[1] != "node=/b:9999" {
		t.Fatalf("after two reloads without node b: dropped %q, want /c:9999 then /b:9999, each once\n%s", got, r.stderr)
	}
	r.stop()
	st, o, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if len(o.States) != 1 || o.States["/a:9999"] == nil {
		t.Errorf("states kept: %v, want /a:9999 alone", o.States)
	}
}
