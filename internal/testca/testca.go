// Package testca makes private certificate authorities and the server
// certificates they sign, written as PEM files: the HTTPS of consoles and
// exporters on loopback in the tests and the load harness. A deployment
// never uses it; its keys live as long as the test or run that made them.
package testca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

// CA is a certificate authority made for one test or run.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// File is the CA certificate as a PEM file (what tls_config.ca_file
	// names), and Pool the same for a Go client.
	File string
	Pool *x509.CertPool
}

// Issued is a server certificate: the pair for a Go server, and the same
// as PEM files for a process that reads them.
type Issued struct {
	Pair     tls.Certificate
	CertFile string
	KeyFile  string
}

// serials keeps the certificates of one process apart.
var serials atomic.Int64

// New makes a CA named name and writes its certificate to dir/name-ca.pem.
func New(dir, name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(serials.Add(1)),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	ca := &CA{cert: cert, key: key, File: filepath.Join(dir, name+"-ca.pem"), Pool: x509.NewCertPool()}
	ca.Pool.AddCert(cert)
	if err := writePEM(ca.File, "CERTIFICATE", der); err != nil {
		return nil, err
	}
	return ca, nil
}

// Issue makes a server certificate for hosts (IP addresses go in the IP
// SANs, names in the DNS SANs) signed by ca, and writes it and its key to
// dir/name.pem and dir/name-key.pem.
func (ca *CA) Issue(dir, name string, hosts ...string) (Issued, error) {
	if len(hosts) == 0 {
		return Issued{}, fmt.Errorf("testca: certificate %s for no host", name)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Issued{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serials.Add(1)),
		Subject:      pkix.Name{CommonName: hosts[0]},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return Issued{}, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return Issued{}, err
	}
	is := Issued{CertFile: filepath.Join(dir, name+".pem"), KeyFile: filepath.Join(dir, name+"-key.pem")}
	if err := writePEM(is.CertFile, "CERTIFICATE", der); err != nil {
		return Issued{}, err
	}
	if err := writePEM(is.KeyFile, "EC PRIVATE KEY", keyDER); err != nil {
		return Issued{}, err
	}
	is.Pair, err = tls.LoadX509KeyPair(is.CertFile, is.KeyFile)
	return is, err
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
