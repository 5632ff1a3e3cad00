package poller

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The poller knows nothing of Prometheus: no file of the package (tests
// aside) imports a github.com/prometheus package. (The API client it
// drives uses prometheus/common/config for its TLS settings; that is the
// client's business.)
func TestImportsNoPrometheus(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/prometheus/") {
				t.Errorf("%s imports %s", f, path)
			}
		}
	}
}
