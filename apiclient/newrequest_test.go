package apiclient

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"reflect"
	"testing"
)

// The requests of newRequest are those of http.NewRequestWithContext for
// the same URL, whether their path takes the parsed-once way or not.
func TestNewRequestIsNetHTTPs(t *testing.T) {
	type ctxKey struct{}
	ctx := context.WithValue(context.Background(), ctxKey{}, 1)
	bases := []string{"http://127.0.0.1:8082", "https://console.example:8443/prefix", "http://console.example:/x",
		"http://[::1]:9000", "http://h/a%2Fb", "http://h/a%20b", "https://h/."}
	paths := []string{"/api/monitor/get/lastevents/1700000000123", "/api/monitor/get/event/count/-5/10",
		"/api/monitor/get/version", "/api/monitor/get/columns/a%20b", "/api/monitor/get/columns/%2E%2E",
		"/api/monitor/get/event/asc/1/2/100", "/api/monitor/get/columns/x_y.z-1", "/api/login"}
	fast := 0
	for _, base := range bases {
		cu := newConsoleURL(base)
		for _, path := range paths {
			for _, monitor := range []bool{true, false} {
				rq := &request{method: http.MethodGet, path: path, monitor: monitor}
				if path == "/api/login" {
					rq.method, rq.body, rq.monitor = http.MethodPost, []byte(`{"name":"n"}`), false
				}
				got, err := cu.newRequest(ctx, base, rq)
				if err != nil {
					t.Fatalf("%s%s: %v", base, path, err)
				}
				var body io.Reader
				if rq.body != nil {
					body = bytes.NewReader(rq.body)
				}
				want, err := http.NewRequestWithContext(ctx, rq.method, base+path, body)
				if err != nil {
					t.Fatal(err)
				}
				if rq.body == nil {
					want.Body = http.NoBody
					if cu.base != nil && plainPath(path) {
						fast++
					}
				}
				if !reflect.DeepEqual(got.URL, want.URL) || got.Host != want.Host || got.Method != want.Method ||
					got.Proto != want.Proto || got.ProtoMajor != want.ProtoMajor || got.ProtoMinor != want.ProtoMinor ||
					got.ContentLength != want.ContentLength || got.Context() != ctx || (rq.body == nil) != (got.Body == http.NoBody) {
					t.Errorf("%s%s: got %s %#v Host %q length %d, net/http's %s %#v Host %q length %d", base, path,
						got.Method, got.URL, got.Host, got.ContentLength, want.Method, want.URL, want.Host, want.ContentLength)
				}
				if got.URL.String() != want.URL.String() {
					t.Errorf("%s%s: writes %q, net/http's %q", base, path, got.URL.String(), want.URL.String())
				}
				if got.Header == nil && !(rq.monitor && rq.body == nil) {
					t.Errorf("%s%s (monitor %v): no header map: only a monitor call without a body may have none", base, path, monitor)
				}
			}
		}
	}
	if fast == 0 {
		t.Fatal("no request took the parsed-once way")
	}
}
