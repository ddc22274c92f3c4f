package kubetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// credentials are what the API server needs to serve TLS and authenticate
// the test, written as files into one directory.
type credentials struct {
	caPEM      []byte // the CA that signed the serving certificate
	token      string // bearer token of a member of system:masters
	servingCrt string // files, for the API server's flags
	servingKey string
	saKey      string // service account signing key
	tokenFile  string
}

// newCredentials makes a CA, a serving certificate for 127.0.0.1 and
// localhost, a service account signing key and an administrator's token, and
// writes them into dir.
func newCredentials(dir string) (*credentials, error) {
	c := &credentials{
		servingCrt: filepath.Join(dir, "serving.crt"),
		servingKey: filepath.Join(dir, "serving.key"),
		saKey:      filepath.Join(dir, "service-account.key"),
		tokenFile:  filepath.Join(dir, "tokens.csv"),
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kubetest CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("create the CA certificate: %w", err)
	}
	c.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serving := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
	}
	servingDER, err := x509.CreateCertificate(rand.Reader, serving, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("create the serving certificate: %w", err)
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	token := make([]byte, 24)
	if _, err := rand.Read(token); err != nil {
		return nil, err
	}
	c.token = hex.EncodeToString(token)

	files := []struct {
		path string
		data []byte
	}{
		{path: c.servingCrt, data: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: servingDER})},
		{path: c.servingKey, data: ecPEM(key)},
		{path: c.saKey, data: ecPEM(saKey)},
		// token,user,uid,"groups": system:masters passes every authorization.
		{path: c.tokenFile, data: fmt.Appendf(nil, "%s,kubetest-admin,kubetest-admin,\"system:masters\"\n", c.token)},
	}
	for _, f := range files {
		if err := os.WriteFile(f.path, f.data, 0o600); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func ecPEM(k *ecdsa.PrivateKey) []byte {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		panic(err) // only fails for curves x509 does not know; P-256 is one it does
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
}
