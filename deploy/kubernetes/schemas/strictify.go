//go:build ignore

// strictify turns a Kubernetes JSON-schema definitions file (the one kubeconform
// ships in its module source under fixtures/cache/) into the strict variant kept
// here as _definitions.json: every object schema that lists its properties and
// says nothing of others gets "additionalProperties": false, so that kubeconform
// rejects unknown fields (a typo such as "readOnlyRootFileSystem" would otherwise
// pass and be silently dropped by the API server).
//
// Objects that are maps (additionalProperties already set), free-form
// (no properties) or explicitly open (x-kubernetes-preserve-unknown-fields)
// are left as they are.
//
//	go run deploy/kubernetes/schemas/strictify.go \
//	  "$(go env GOMODCACHE)/github.com/yannh/kubeconform@v0.8.0/fixtures/cache/6dc6142c64b944d783a3e783526114da8e747a14a11d8b32dd1f12e2d89a8330" \
//	  deploy/kubernetes/schemas/_definitions.json
package main

import (
	"encoding/json"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: strictify SOURCE_DEFINITIONS.json DEST.json")
		os.Exit(2)
	}
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
	if _, ok := doc["definitions"].(map[string]any); !ok {
		fmt.Fprintf(os.Stderr, "%s: no definitions object\n", os.Args[1])
		os.Exit(1)
	}
	n := strictify(doc)
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(os.Args[2], append(out, '\n'), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%s: %d object schemas made strict\n", os.Args[2], n)
}

// strictify closes the open objects of the schema s and of the schemas nested
// in it, and returns how many it closed. It follows the schema keywords rather
// than every map, so that a property that happens to be called "properties"
// (as in CustomResourceDefinition's JSONSchemaProps) is not taken for a schema.
func strictify(s any) int {
	t, ok := s.(map[string]any)
	if !ok {
		return 0
	}
	n := 0
	props, hasProps := t["properties"].(map[string]any)
	_, hasAdditional := t["additionalProperties"]
	_, preserve := t["x-kubernetes-preserve-unknown-fields"]
	if hasProps && !hasAdditional && !preserve {
		t["additionalProperties"] = false
		n++
	}
	for _, key := range []string{"definitions", "properties", "patternProperties"} {
		if m, ok := t[key].(map[string]any); ok {
			if key == "properties" {
				m = props
			}
			for _, child := range m {
				n += strictify(child)
			}
		}
	}
	for _, key := range []string{"items", "additionalProperties", "not"} {
		n += strictify(t[key])
	}
	for _, key := range []string{"allOf", "anyOf", "oneOf", "items"} {
		if list, ok := t[key].([]any); ok {
			for _, child := range list {
				n += strictify(child)
			}
		}
	}
	return n
}
