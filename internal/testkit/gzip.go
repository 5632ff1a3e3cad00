package testkit

import (
	"bytes"
	"compress/gzip"
	"io"
	"testing"
)

// Gunzip is the content of a whole gzip answer; anything else fails t.
func Gunzip(t testing.TB, b []byte) string {
	t.Helper()
	z, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("answer is not gzip: %v", err)
	}
	plain, err := io.ReadAll(z)
	if err != nil {
		t.Fatalf("answer is not whole gzip: %v", err)
	}
	return string(plain)
}
