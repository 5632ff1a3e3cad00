package tracker

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The engine and what it stands on or drives know nothing of Prometheus:
// no file of tracker, tally, event or poller (tests aside) imports a
// github.com/prometheus package, and none names a label (label names are
// collector's: collector/labels.go). (The API client the poller drives
// uses prometheus/common/config for its TLS settings; that is the
// client's business.)
func TestEngineKnowsNoPrometheus(t *testing.T) {
	for _, dir := range []string{".", "../tally", "../event", "../poller"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("no Go file in %s", dir)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range parsed.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if strings.HasPrefix(path, "github.com/prometheus/") {
					t.Errorf("%s imports %s", f, path)
				}
			}
			ast.Inspect(parsed, func(n ast.Node) bool {
				var names []*ast.Ident
				switch d := n.(type) {
				case *ast.ValueSpec:
					names = d.Names
				case *ast.TypeSpec:
					names = []*ast.Ident{d.Name}
				case *ast.FuncDecl:
					names = []*ast.Ident{d.Name}
				}
				for _, id := range names {
					if strings.HasPrefix(id.Name, "Label") {
						t.Errorf("%s declares %s: label names are collector's", f, id.Name)
					}
				}
				return true
			})
		}
	}
}
