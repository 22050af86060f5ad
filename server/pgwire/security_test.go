package pgwire

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
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

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/jackc/pgx/v5"

	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/server"
)

// selfSigned writes a certificate for 127.0.0.1 and its key; it returns
// the certificate's and the key's paths.
func selfSigned(t testing.TB) (string, string) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	dir := t.TempDir()
	cert, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, keyFile
}

func connectErr(dsn string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err == nil {
		c.Close(ctx)
	}
	return err
}

func authFixture(t *testing.T, pg func(*Config), tlsOn bool) *fixture {
	hashed, err := server.HashPassword("carol-pw")
	if err != nil {
		t.Fatal(err)
	}
	var cert, key string
	if tlsOn {
		cert, key = selfSigned(t)
	}
	f := startFixture(t, fixtureOpts{
		server: func(c *server.Config) {
			c.Auth = server.AuthConfig{
				Users:      map[string]string{"alice": "alice-pw", "bob": "bob-pw", "carol": hashed},
				ReadGrants: map[string][]string{"alice": {"*"}, "bob": {"granted"}, "carol": {"*"}},
			}
			if tlsOn {
				c.TLS = server.TLSConfig{CertFile: cert, KeyFile: key}
			}
		},
		pg: pg,
	})
	one := func() arrow.Record { return typesRecord(f.mem) }
	f.addTable(t, "granted", typesSchema, one())
	f.addTable(t, "secret", typesSchema, one())
	return f
}

// TestAuthSCRAM: the right password logs in with SCRAM-SHA-256 (also for
// a user whose users-file entry is a PBKDF2 hash); no password, a wrong
// one and an unknown user are refused with 28P01; a user without a grant
// sees the table as missing (42P01), and may not run DDL (42501).
func TestAuthSCRAM(t *testing.T) {
	f := authFixture(t, nil, false)
	for _, tc := range []struct{ user, pw string }{{"alice", ""}, {"alice", "wrong"}, {"mallory", "alice-pw"}, {"bob", "alice-pw"}} {
		wantState(t, connectErr(f.dsn(tc.user, tc.pw, "")), "28P01")
	}
	if err := connectErr(f.dsn("carol", "carol-pw", "")); err != nil {
		t.Fatalf("hashed user: %v", err)
	}
	bob := pgxConnect(t, f.dsn("bob", "bob-pw", ""))
	ctx := context.Background()
	var n int64
	if err := bob.QueryRow(ctx, "SELECT count(*) FROM granted").Scan(&n); err != nil || n != 3 {
		t.Fatalf("granted table: %d %v", n, err)
	}
	err := bob.QueryRow(ctx, "SELECT count(*) FROM secret").Scan(&n)
	wantState(t, err, "42P01")
	if strings.Contains(err.Error(), "secret") && strings.Contains(err.Error(), "did you mean") {
		t.Fatalf("error suggests hidden tables: %v", err)
	}
	_, err = bob.Exec(ctx, "CREATE TABLE x (a BIGINT) USING memory")
	wantState(t, err, "42501")
	alice := pgxConnect(t, f.dsn("alice", "alice-pw", ""))
	if err := alice.QueryRow(ctx, "SELECT count(*) FROM secret").Scan(&n); err != nil || n != 3 {
		t.Fatalf("alice: %d %v", n, err)
	}
}

// TestAuthCleartextNeedsTLS: with PasswordAuth "password" a cleartext
// password is accepted on a TLS connection (the Flight server's
// certificate) and refused on a plain one.
func TestAuthCleartextNeedsTLS(t *testing.T) {
	f := authFixture(t, func(c *Config) { c.PasswordAuth = "password" }, true)
	tlsDSN := strings.Replace(f.dsn("alice", "alice-pw", ""), "sslmode=disable", "sslmode=require", 1)
	if err := connectErr(tlsDSN); err != nil {
		t.Fatalf("TLS + cleartext: %v", err)
	}
	wantState(t, connectErr(strings.Replace(tlsDSN, "alice-pw", "nope", 1)), "28P01")
	wantState(t, connectErr(f.dsn("alice", "alice-pw", "")), "28000")
	// SCRAM over TLS works as well.
	g := authFixture(t, nil, true)
	if err := connectErr(strings.Replace(g.dsn("alice", "alice-pw", ""), "sslmode=disable", "sslmode=require", 1)); err != nil {
		t.Fatalf("TLS + SCRAM: %v", err)
	}
}

// TestTLSRequiredOffLoopback: a non-loopback address without TLS and
// users does not start; with them, a connection that does not ask for
// TLS is refused.
func TestTLSRequiredOffLoopback(t *testing.T) {
	f := startFixture(t, fixtureOpts{})
	s, err := New(f.srv.Frontend(), Config{Addr: "0.0.0.0:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); !errors.Is(err, ErrInsecure) {
		t.Fatalf("Start on 0.0.0.0 without TLS: %v, want ErrInsecure", err)
	}
	g := authFixture(t, nil, true)
	g.pg.mu.Lock()
	g.pg.loopback = false // as if it listened on another interface
	g.pg.mu.Unlock()
	wantState(t, connectErr(g.dsn("alice", "alice-pw", "")), "28000")
	if err := connectErr(strings.Replace(g.dsn("alice", "alice-pw", ""), "sslmode=disable", "sslmode=require", 1)); err != nil {
		t.Fatalf("TLS connection: %v", err)
	}
}

// rawConn opens a plain TCP connection to the endpoint.
func rawConn(t testing.TB, f *fixture) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", f.pg.Addr().String(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(testutil.Scaled(30 * time.Second)))
	return c
}

// readErrorCode reads the first backend message and returns the SQLSTATE
// of an ErrorResponse ("" for another message, or when the server closes
// the connection).
func readErrorCode(c net.Conn) string {
	head := make([]byte, 5)
	if _, err := io.ReadFull(c, head); err != nil {
		return ""
	}
	n := int(binary.BigEndian.Uint32(head[1:])) - 4
	if n < 0 || n > 1<<20 {
		return ""
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(c, body); err != nil || head[0] != 'E' {
		return ""
	}
	for _, f := range strings.Split(string(body), "\x00") {
		if strings.HasPrefix(f, "C") {
			return f[1:]
		}
	}
	return ""
}

// TestHostileStartup: bad startup packets, an unknown message type after
// login, a message over the size limit and a cancel with a wrong key are
// refused with the protocol's errors, and the server keeps serving.
func TestHostileStartup(t *testing.T) {
	f := startFixture(t, fixtureOpts{pg: func(c *Config) { c.MaxMessageBytes = 1 << 16 }})
	f.addTable(t, "types_t", typesSchema, typesRecord(f.mem))
	packet := func(b ...[]byte) []byte {
		var body []byte
		for _, x := range b {
			body = append(body, x...)
		}
		out := binary.BigEndian.AppendUint32(nil, uint32(len(body)+4))
		return append(out, body...)
	}
	u32 := func(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
	cases := []struct {
		name string
		send []byte
		want string
	}{
		{"length too small", []byte{0, 0, 0, 2}, "08P01"},
		{"length too large", []byte{0x7f, 0, 0, 0, 0, 3, 0, 0}, "08P01"},
		{"unknown protocol", packet(u32(0x00020000)), "08P01"},
		{"no user", packet(u32(196608), []byte("database\x00x\x00\x00")), "28000"},
		{"unterminated parameters", packet(u32(196608), []byte("user\x00bob")), "08P01"},
		{"unknown database", packet(u32(196608), []byte("user\x00bob\x00database\x00nope\x00\x00")), "3D000"},
	}
	for _, tc := range cases {
		c := rawConn(t, f)
		if _, err := c.Write(tc.send); err != nil {
			t.Fatal(err)
		}
		if got := readErrorCode(c); got != tc.want {
			t.Errorf("%s: SQLSTATE %q, want %q", tc.name, got, tc.want)
		}
	}
	// After login: an unknown message type, and a message over the limit.
	login := func() net.Conn {
		c := rawConn(t, f)
		if _, err := c.Write(packet(u32(196608), []byte("user\x00bob\x00\x00"))); err != nil {
			t.Fatal(err)
		}
		// Read until ReadyForQuery.
		for {
			head := make([]byte, 5)
			if _, err := io.ReadFull(c, head); err != nil {
				t.Fatal(err)
			}
			body := make([]byte, binary.BigEndian.Uint32(head[1:])-4)
			if _, err := io.ReadFull(c, body); err != nil {
				t.Fatal(err)
			}
			if head[0] == 'Z' {
				return c
			}
		}
	}
	c := login()
	c.Write([]byte{'!', 0, 0, 0, 4})
	if got := readErrorCode(c); got != "08P01" {
		t.Errorf("unknown message: %q", got)
	}
	c = login()
	c.Write(append([]byte{'Q'}, u32(1<<20)...))
	if got := readErrorCode(c); got != "54000" {
		t.Errorf("huge message: %q", got)
	}
	// A cancel with a wrong key does nothing; the server still serves.
	c = rawConn(t, f)
	c.Write(packet(u32(80877102), u32(1), u32(12345)))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Errorf("cancel request got an answer")
	}
	conn := pgxConnect(t, f.dsn("bob", "", ""))
	var n int64
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM types_t").Scan(&n); err != nil || n != 3 {
		t.Fatalf("after attacks: %d %v", n, err)
	}
}

// TestMaxConnections: connections past the limit are refused with 53300
// and the slots come back when clients leave.
func TestMaxConnections(t *testing.T) {
	f := startFixture(t, fixtureOpts{pg: func(c *Config) { c.MaxConnections = 3 }})
	var conns []*pgx.Conn
	for i := 0; i < 3; i++ {
		c, err := pgx.Connect(context.Background(), f.dsn("u", "", ""))
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	wantState(t, connectErr(f.dsn("u", "", "")), "53300")
	conns[0].Close(context.Background())
	deadline := time.Now().Add(testutil.Scaled(30 * time.Second))
	for f.pg.connections() >= 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := connectErr(f.dsn("u", "", "")); err != nil {
		t.Fatalf("after a client left: %v", err)
	}
	for _, c := range conns[1:] {
		c.Close(context.Background())
	}
}
