package testkit

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
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

// Do sends req as it is (no transparent decompression: the body is what
// the server wrote) and returns the answer with its body read whole.
func Do(t testing.TB, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}
