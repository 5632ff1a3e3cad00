package faults

import (
	"crypto/tls"
	"testing"

	"github.com/indexima-exporter/indexima_exporter/internal/testca"
)

// testCA is a certificate authority made for one test.
type testCA struct{ *testca.CA }

func newTestCA(t *testing.T, dir, name string) *testCA {
	t.Helper()
	ca, err := testca.New(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{ca}
}

// issue makes a server certificate for the given names and returns it with
// the paths of its certificate and key files.
func (ca *testCA) issue(t *testing.T, dir, name string, hosts ...string) (tls.Certificate, string, string) {
	t.Helper()
	is, err := ca.Issue(dir, name, hosts...)
	if err != nil {
		t.Fatal(err)
	}
	return is.Pair, is.CertFile, is.KeyFile
}
