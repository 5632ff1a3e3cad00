package apiclient

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestShapesTheSimulatorDoesNotProduce runs the client over HTTP against a
// minimal console answering documented-but-unusual shapes the simulator does
// not serve: a login without createdAt, a bare-string version, a count as
// {"count":12}, columns under "columns", and gzip without a Content-Encoding
// header.
func TestShapesTheSimulatorDoesNotProduce(t *testing.T) {
	const token = "T0kenT0kenT0kenT0kenT0kenT0kenT0kenT0kenT0kenT0kenT0kenT0kenAB12"
	var logins atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/login" {
			logins.Add(1)
			// The older release's answer: no createdAt.
			_, _ = w.Write([]byte(`{"id":"` + token + `","userName":"exporter","isAdministrator":false,"localUser":false}`))
			return
		}
		if r.Header.Get("Authorization") != token {
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"message":"No session attribute found, ..."}`))
			return
		}
		switch {
		case strings.HasSuffix(r.URL.Path, "/get/version"):
			_, _ = w.Write([]byte(`"2021.1.3"`))
		case strings.HasSuffix(r.URL.Path, "/get/event/count/1/2"):
			_, _ = w.Write([]byte(`{"count":12}`))
		case strings.Contains(r.URL.Path, "/get/columns/"):
			_, _ = w.Write([]byte(`{"columns":[{"columnName":"id"},{"columnName":"amount"}]}`))
		case strings.HasSuffix(r.URL.Path, "/get/events"):
			// Compressed, but the header was lost on the way.
			_, _ = w.Write(gzipped(t, []byte(docListing)))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	c := newClient(t, srv.URL, nil)
	ctx := ctxT(t)

	v, err := c.Version(ctx, node1)
	if err != nil || v.Version != "2021.1.3" {
		t.Fatalf("version %+v, %v", v, err)
	}
	n, err := c.EventCount(ctx, node1, 1, 2)
	if err != nil || n != 12 {
		t.Fatalf("count %d, %v", n, err)
	}
	cols, err := c.Columns(ctx, node1, "etalon.nyc")
	if err != nil || cols.Count != 2 || cols.Columns[1] != "amount" {
		t.Fatalf("columns %+v, %v", cols, err)
	}
	l, err := c.events(ctx, node1)
	if err != nil || len(l.Reqs) != 2 || l.Reqs[1].Comment != "etalon.nyc_yellow_full" {
		t.Fatalf("events %+v, %v", l, err)
	}
	if logins.Load() != 1 {
		t.Fatalf("%d logins", logins.Load())
	}
}

// TestRedirectNotFollowed: a redirect (e.g. http to https) is reported, not
// followed with the credentials.
func TestRedirectNotFollowed(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, "https://elsewhere.example/api/login", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	c := newClient(t, srv.URL, nil)
	err := c.login(ctxT(t))
	e := checkErrorKind(t, err, KindRefused)
	if e.Status != http.StatusTemporaryRedirect || !strings.Contains(e.Error(), "elsewhere.example") || hits.Load() != 1 {
		t.Fatalf("error %v after %d requests", e, hits.Load())
	}
}

func checkErrorKind(t *testing.T, err error, k Kind) *Error {
	t.Helper()
	e, ok := err.(*Error)
	if !ok || e.Kind != k {
		t.Fatalf("got %v, want kind %s", err, k)
	}
	return e
}
