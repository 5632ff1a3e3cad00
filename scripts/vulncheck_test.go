// Package scripts tests the shell scripts of `make test` that decide
// something on their own.
package scripts

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// osvEntry is a vulnerability of a test database: module mod is affected at
// every version, in package pkg (symbols: those; none: the whole package).
type osvEntry struct {
	id, mod, pkg string
	symbols      []string
}

// writeVulnDB writes a database in the v1 layout that govulncheck -db
// file://DIR reads (index/db.json, index/modules.json, index/vulns.json,
// ID/<id>.json), holding the given entries.
func writeVulnDB(t *testing.T, entries ...osvEntry) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"index", "ID"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const modified = "2026-01-02T00:00:00Z"
	type ref struct {
		ID       string `json:"id"`
		Modified string `json:"modified"`
	}
	byModule := map[string][]ref{}
	var vulns []map[string]any
	for _, e := range entries {
		byModule[e.mod] = append(byModule[e.mod], ref{e.id, modified})
		vulns = append(vulns, map[string]any{"id": e.id, "modified": modified, "aliases": []string{}})
		imp := map[string]any{"path": e.pkg}
		if len(e.symbols) > 0 {
			imp["symbols"] = e.symbols
		}
		writeJSON(t, filepath.Join(dir, "ID", e.id+".json"), map[string]any{
			"schema_version": "1.3.1", "id": e.id, "modified": modified, "published": modified,
			"summary": "test entry " + e.id, "details": "A vulnerability made up by the test.",
			"affected": []any{map[string]any{
				"package":            map[string]string{"name": e.mod, "ecosystem": "Go"},
				"ranges":             []any{map[string]any{"type": "SEMVER", "events": []any{map[string]string{"introduced": "0"}}}},
				"ecosystem_specific": map[string]any{"imports": []any{imp}},
			}},
			"database_specific": map[string]string{"url": "https://pkg.go.dev/vuln/" + e.id, "review_status": "REVIEWED"},
		})
	}
	var modules []map[string]any
	for m, refs := range byModule {
		modules = append(modules, map[string]any{"path": m, "vulns": refs})
	}
	writeJSON(t, filepath.Join(dir, "index", "db.json"), map[string]string{"modified": modified})
	writeJSON(t, filepath.Join(dir, "index", "modules.json"), modules)
	writeJSON(t, filepath.Join(dir, "index", "vulns.json"), vulns)
	return dir
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// runVulncheck runs scripts/vulncheck.sh with VULNDB=db, the govulncheck of
// the tools cache, and CI set or not; it returns the output and exit status.
func runVulncheck(t *testing.T, db string, ci bool) (string, int) {
	t.Helper()
	bin := testkit.Tool(t, "govulncheck", "scripts/install-test-deps.sh builds golang.org/x/vuln/cmd/govulncheck@v1.9.0")
	return runScript(t, "vulncheck.sh", 5*time.Minute, map[string]string{"VULNDB": db, "INDEXIMA_TOOLS_BIN": filepath.Dir(bin)}, ci)
}

// A vulnerability in code we call fails the scan; one in a required module
// whose affected package we do not import is printed and does not. The
// exporter calls log.NewLogfmtLogger of go-kit/log; nothing imports
// golang.org/x/crypto/openpgp (the case of GO-2026-5932).
func TestVulncheckFailsOnlyOnReachedCode(t *testing.T) {
	unreached := osvEntry{id: "GO-9999-0002", mod: "golang.org/x/crypto", pkg: "golang.org/x/crypto/openpgp"}
	reached := osvEntry{id: "GO-9999-0001", mod: "github.com/go-kit/log", pkg: "github.com/go-kit/log",
		symbols: []string{"NewLogfmtLogger"}}

	out, code := runVulncheck(t, writeVulnDB(t, unreached), true)
	if code != 0 || !strings.Contains(out, "=== Module Results ===") || !strings.Contains(out, unreached.id) ||
		!strings.Contains(out, "vulncheck: ok") {
		t.Fatalf("a vulnerability only in a required module: exit %d, want 0 with it printed:\n%s", code, out)
	}

	out, code = runVulncheck(t, writeVulnDB(t, unreached, reached), true)
	if code == 0 || !strings.Contains(out, reached.id) || !strings.Contains(out, "NewLogfmtLogger") ||
		!strings.Contains(out, "FAIL: vulnerabilities reached from our code") {
		t.Fatalf("a vulnerability reached from our code: exit %d, want a failure naming it:\n%s", code, out)
	}
}

// Without a database the scan fails under CI, saying where it looked, and
// is skipped with a note elsewhere.
func TestVulncheckMissingDatabase(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-vulndb")
	out, code := runVulncheck(t, missing, true)
	if code == 0 || !strings.Contains(out, "no vulnerability database at "+missing) || !strings.Contains(out, "VULNDB") {
		t.Fatalf("CI without a database: exit %d, want a failure naming the path and VULNDB:\n%s", code, out)
	}
	out, code = runVulncheck(t, missing, false)
	if code != 0 || !strings.Contains(out, "skipped") {
		t.Fatalf("no database outside CI: exit %d, want a skip:\n%s", code, out)
	}
}
