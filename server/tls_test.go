package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	adbcflight "github.com/apache/arrow-adbc/go/adbc/driver/flightsql"
	"github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/memsink"
)

// testPKI is a CA with a server certificate for 127.0.0.1 and a client
// certificate, written as PEM files.
type testPKI struct {
	dir                   string
	caPEM                 []byte
	serverCert, serverKey string
	clientCert, clientKey string
	caFile                string
	pool                  *x509.CertPool
	client                tls.Certificate
}

func newTestPKI(t testing.TB) *testPKI {
	t.Helper()
	p := &testPKI{dir: t.TempDir()}
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "arrowstream test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	p.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	p.caFile = p.write(t, "ca.pem", p.caPEM)
	p.pool = x509.NewCertPool()
	p.pool.AddCert(ca)
	issue := func(name string, serial int64, usage x509.ExtKeyUsage) (string, string) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, _ := x509.MarshalECPrivateKey(key)
		return p.write(t, name+".pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
			p.write(t, name+".key", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}))
	}
	p.serverCert, p.serverKey = issue("server", 2, x509.ExtKeyUsageServerAuth)
	p.clientCert, p.clientKey = issue("client", 3, x509.ExtKeyUsageClientAuth)
	p.client, err = tls.LoadX509KeyPair(p.clientCert, p.clientKey)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *testPKI) write(t testing.TB, name string, b []byte) string {
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func (p *testPKI) read(t testing.TB, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// listOnce lists flights through a TLS client with cfg.
func listOnce(s *Server, cfg *tls.Config) error {
	c, err := flight.NewClientWithMiddleware(s.Addr().String(), nil, nil, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(time.Minute))
	defer cancel()
	ls, err := c.ListFlights(ctx, &flight.Criteria{})
	if err != nil {
		return err
	}
	for {
		if _, err := ls.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

func TestTLSClientMustVerifyTheCertificate(t *testing.T) {
	pki := newTestPKI(t)
	f := newSQLFixture(t, Config{TLS: TLSConfig{CertFile: pki.serverCert, KeyFile: pki.serverKey}})

	if err := listOnce(f.srv, &tls.Config{RootCAs: pki.pool}); err != nil {
		t.Fatalf("verified TLS client: %v", err)
	}
	// Without the CA the client cannot verify the server and fails.
	err := listOnce(f.srv, &tls.Config{RootCAs: x509.NewCertPool()})
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("unverifiable server accepted: %v", err)
	}
	// A plaintext client cannot talk to it either.
	c := flightClient(t, f.srv)
	_, err = c.GetFlightInfo(context.Background(), &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"orders"}})
	if err == nil {
		t.Fatal("plaintext client served by a TLS server")
	}

	// ADBC over grpc+tls with the CA as root certificate.
	uri := "grpc+tls://" + f.srv.Addr().String()
	cn := adbcConn(t, f.srv, map[string]string{adbc.OptionKeyURI: uri, adbcflight.OptionSSLRootCerts: string(pki.caPEM)})
	if recs := mustQuery(t, cn, "SELECT count(*) FROM orders"); recs[0].NumRows() != 1 {
		t.Fatal("no count")
	}
	db, _ := adbcflight.NewDriver(memory.DefaultAllocator).NewDatabase(map[string]string{adbc.OptionKeyURI: uri})
	defer db.Close()
	if cn2, err := db.Open(context.Background()); err == nil {
		_, err = query(context.Background(), cn2, "SELECT count(*) FROM orders", nil)
		cn2.Close()
		if err == nil {
			t.Fatal("ADBC without the CA read from the server")
		}
	}
}

func TestMutualTLS(t *testing.T) {
	pki := newTestPKI(t)
	f := newSQLFixture(t, Config{TLS: TLSConfig{CertFile: pki.serverCert, KeyFile: pki.serverKey, ClientCAFile: pki.caFile}})
	if err := listOnce(f.srv, &tls.Config{RootCAs: pki.pool, Certificates: []tls.Certificate{pki.client}}); err != nil {
		t.Fatalf("client with a certificate: %v", err)
	}
	if err := listOnce(f.srv, &tls.Config{RootCAs: pki.pool}); err == nil {
		t.Fatal("client without a certificate accepted")
	}
	cn := adbcConn(t, f.srv, map[string]string{
		adbc.OptionKeyURI:               "grpc+tls://" + f.srv.Addr().String(),
		adbcflight.OptionSSLRootCerts:   string(pki.caPEM),
		adbcflight.OptionMTLSCertChain:  pki.read(t, pki.clientCert),
		adbcflight.OptionMTLSPrivateKey: pki.read(t, pki.clientKey),
	})
	mustQuery(t, cn, "SELECT count(*) FROM orders")
}

func TestConfigRefusesExposedInsecureServer(t *testing.T) {
	pki := newTestPKI(t)
	auth := AuthConfig{Users: map[string]string{"a": "b"}}
	tlsc := TLSConfig{CertFile: pki.serverCert, KeyFile: pki.serverKey}
	for _, tc := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"all interfaces, nothing", Config{Addr: "0.0.0.0:0"}, false},
		{"empty host", Config{Addr: ":8815"}, false},
		{"public IP, auth only", Config{Addr: "192.0.2.1:8815", Auth: auth}, false},
		{"public IP, TLS only", Config{Addr: "[2001:db8::1]:8815", TLS: tlsc}, false},
		{"public IP, auth and TLS", Config{Addr: "192.0.2.1:8815", Auth: auth, TLS: tlsc}, true},
		{"allowed explicitly", Config{Addr: "0.0.0.0:0", AllowInsecure: true}, true},
		{"loopback v4", Config{Addr: "127.0.0.1:0"}, true},
		{"loopback v6", Config{Addr: "[::1]:0"}, true},
		{"localhost", Config{Addr: "localhost:0"}, true},
	} {
		err := tc.cfg.checkExposure(context.Background())
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrInsecure)) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	// Start refuses before listening.
	s, err := New(Config{Addr: "0.0.0.0:0", Sinks: nil})
	if err == nil {
		t.Fatal("config without sinks accepted")
	}
	s, err = New(Config{Addr: "0.0.0.0:0", Sinks: memsink.NewCatalog(), Logger: testLogger})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Start(context.Background())
	if !errors.Is(err, ErrInsecure) || !strings.Contains(err.Error(), "authentication (users) and TLS") {
		t.Fatalf("Start: %v", err)
	}
	if s.Addr() != nil {
		t.Fatal("refused server listens")
	}
	for _, bad := range []Config{
		{Addr: "127.0.0.1:0", Sinks: memsink.NewCatalog(), IPCCompression: "snappy"},
		{Addr: "127.0.0.1:0", Sinks: memsink.NewCatalog(), TLS: TLSConfig{CertFile: "x"}},
		{Addr: "127.0.0.1:0", Sinks: memsink.NewCatalog(), TLS: TLSConfig{ClientCAFile: "x"}},
		{Addr: "127.0.0.1:0", Sinks: memsink.NewCatalog(), TLS: TLSConfig{CertFile: "missing", KeyFile: "missing"}},
		{Addr: "127.0.0.1:0", Sinks: memsink.NewCatalog(), Auth: AuthConfig{UsersFile: "missing"}},
	} {
		if _, err := New(bad); err == nil {
			t.Errorf("config %+v accepted", bad)
		}
	}
}
