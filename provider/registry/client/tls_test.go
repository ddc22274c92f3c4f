package client_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/big"
	"net"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/provider/registry/client"
)

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "switchyard test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// issue returns a server certificate for the given names and addresses.
func (ca *testCA) issue(t *testing.T, dnsNames []string, ips []net.IP) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "controller"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     dnsNames,
		IPAddresses:  ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// startTLSController serves a running registry over TLS with cert.
func startTLSController(t *testing.T, cert tls.Certificate) (string, *registry.Registry) {
	t.Helper()
	reg, err := registry.New(registry.WithToken(testToken), registry.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- reg.Run(ctx) }()
	srv := httptest.NewUnstartedServer(reg.Handler())
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are the point
	srv.StartTLS()
	t.Cleanup(func() {
		cancel()
		<-done
		srv.Close()
	})
	waitReady(t, "registry", reg.Ready())
	return srv.URL, reg
}

func TestTLS(t *testing.T) {
	ca := newCA(t)
	loopback := []net.IP{net.IPv4(127, 0, 0, 1)}

	t.Run("a certificate of a custom CA for the address", func(t *testing.T) {
		url, reg := startTLSController(t, ca.issue(t, nil, loopback))
		for _, u := range []string{url, "wss" + url[len("https"):]} {
			c, err := client.New(u, client.WithToken(testToken), quiet(t), fast, client.WithRegistration(gateway),
				client.WithServices(), client.WithTLSConfig(&tls.Config{RootCAs: ca.pool}))
			if err != nil {
				t.Fatal(err)
			}
			stop := run(t, c)
			waitReady(t, "client over "+u, c.Ready())
			if _, ok := reg.Instances().Load(c.RuntimeInstanceID()); !ok || !c.Status().Connected {
				t.Errorf("%s: not registered: %+v", u, c.Status())
			}
			stop()
		}
		r, err := client.NewRegistrar(url, backend, client.WithToken(testToken), quiet(t), fast, client.WithTLSConfig(&tls.Config{RootCAs: ca.pool}))
		if err != nil {
			t.Fatal(err)
		}
		run(t, r)
		waitReady(t, "registrar", r.Ready())
		if _, ok := reg.Instances().Load(r.RuntimeInstanceID()); !ok {
			t.Error("registrar not registered over TLS")
		}
	})

	refused := []struct {
		name string
		cert tls.Certificate
		cfg  *tls.Config
		want string
	}{
		{"host name mismatch", ca.issue(t, []string{"controller.other.invalid"}, nil), &tls.Config{RootCAs: ca.pool}, "127.0.0.1"},
		{"unknown authority", newCA(t).issue(t, nil, loopback), &tls.Config{RootCAs: ca.pool}, "certificate"},
		{"no CA given: the system's roots", ca.issue(t, nil, loopback), nil, "certificate"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			url, _ := startTLSController(t, tt.cert)
			opts := []client.Option{client.WithToken(testToken), quiet(t), fast, client.WithRegistration(gateway)}
			if tt.cfg != nil {
				opts = append(opts, client.WithTLSConfig(tt.cfg))
			}
			c, err := client.New(url, opts...)
			if err != nil {
				t.Fatal(err)
			}
			run(t, c)
			// It keeps trying, and failing, saying why.
			eventually(t, "a certificate error reported", func() bool {
				st := c.Status()
				return contains(st.LastError, "x509") && contains(st.LastError, tt.want)
			}, func() string { return fmt.Sprintf("status %+v", c.Status()) })
			if c.Status().Connected || c.RuntimeInstanceID() != "" {
				t.Errorf("connected through a certificate it must refuse: %+v", c.Status())
			}
		})
	}
}
