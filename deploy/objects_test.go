package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// object is one decoded Kubernetes object (or any YAML mapping).
type object = map[string]any

// decodeAll decodes every YAML document of data; empty documents are dropped.
func decodeAll(t testing.TB, name string, data []byte) []object {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []object
	for i := 0; i < 1000; i++ {
		var o object
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: document %d: %v", name, i+1, err)
		}
		if o != nil {
			out = append(out, o)
		}
	}
	t.Fatalf("%s: more than 1000 documents", name)
	return nil
}

// readObjects decodes the YAML files matched by the globs, relative to the repo root.
func readObjects(t testing.TB, globs ...string) []object {
	t.Helper()
	var out []object
	for _, f := range globFiles(t, globs...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, decodeAll(t, f, data)...)
	}
	return out
}

// globFiles expands globs relative to the repo root; each must match.
func globFiles(t testing.TB, globs ...string) []string {
	t.Helper()
	var files []string
	for _, g := range globs {
		m, err := filepath.Glob(filepath.Join(testkit.RepoRoot(t), g))
		if err != nil || len(m) == 0 {
			t.Fatalf("%s matches no file (%v)", g, err)
		}
		files = append(files, m...)
	}
	sort.Strings(files)
	return files
}

// dig walks nested mappings and lists (int keys index lists); nil when absent.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(object)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		default:
			panic(fmt.Sprintf("dig: bad key %T", p))
		}
	}
	return v
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// byKind returns the objects of one kind.
func byKind(objs []object, kind string) []object {
	var out []object
	for _, o := range objs {
		if o["kind"] == kind {
			out = append(out, o)
		}
	}
	return out
}

// find returns the object of that kind and name, failing when absent.
func find(t testing.TB, objs []object, kind, name string) object {
	t.Helper()
	for _, o := range byKind(objs, kind) {
		if dig(o, "metadata", "name") == name {
			return o
		}
	}
	t.Fatalf("no %s %q among the objects", kind, name)
	return nil
}

// toYAML encodes objects as a multi-document stream.
func toYAML(t testing.TB, objs ...object) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	for _, o := range objs {
		if err := enc.Encode(o); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// deepCopy copies a decoded object so that a test can alter it freely.
func deepCopy(t testing.TB, o object) object {
	t.Helper()
	objs := decodeAll(t, "copy", toYAML(t, o))
	return objs[0]
}
