package deploy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// schemaLocation is where kubeconform finds the schemas kept in the repo
// (no download: the machines have no internet).
const schemaLocation = "deploy/kubernetes/schemas/{{ .ResourceKind }}{{ .KindSuffix }}.json"

// kcResource is one entry of kubeconform's JSON output.
type kcResource struct {
	Filename, Kind, Name, Version, Status, Msg string
}

// kubeconform validates files (or a stream given as data, when files is
// empty) strictly against the repo's schemas and returns one entry per
// resource, valid ones included. A kind without a schema is an error entry.
func kubeconform(t testing.TB, data []byte, files ...string) []kcResource {
	t.Helper()
	bin := tool(t, "kubeconform")
	args := []string{"-strict", "-output", "json", "-verbose", "-schema-location", schemaLocation}
	if len(files) == 0 {
		f := filepath.Join(t.TempDir(), "stream.yaml")
		if err := os.WriteFile(f, data, 0o644); err != nil {
			t.Fatal(err)
		}
		files = []string{f}
	}
	r := run(t, 2*time.Minute, testkit.RepoRoot(t), bin, append(args, files...)...)
	// Exit status 1 means invalid resources; the JSON says which.
	var out struct{ Resources []kcResource }
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("kubeconform output is not JSON (%v): %v\n%s", r.err, err, r)
	}
	return out.Resources
}

// requireValid fails for every resource kubeconform did not find valid, and
// returns the kinds it validated.
func requireValid(t testing.TB, res []kcResource) map[string]int {
	t.Helper()
	if len(res) == 0 {
		t.Fatal("kubeconform found no resource")
	}
	kinds := map[string]int{}
	for _, r := range res {
		if r.Status != "statusValid" {
			t.Errorf("%s: %s %s: %s: %s", r.Filename, r.Kind, r.Name, r.Status, r.Msg)
			continue
		}
		kinds[r.Kind]++
	}
	return kinds
}

// requireKinds fails unless every kind was validated at least once.
func requireKinds(t testing.TB, got map[string]int, want ...string) {
	t.Helper()
	for _, k := range want {
		if got[k] == 0 {
			t.Errorf("no valid %s (validated: %v)", k, got)
		}
	}
}

func relFiles(t testing.TB, globs ...string) []string {
	t.Helper()
	var out []string
	for _, f := range globFiles(t, globs...) {
		rel, err := filepath.Rel(testkit.RepoRoot(t), f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rel)
	}
	return out
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
