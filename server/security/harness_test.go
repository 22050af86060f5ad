package security

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// binary is the arrowstream command built by TestMain.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "arrowstream-security-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "arrowstream")
	build := exec.Command("go", "build", "-o", binary, "../../cmd/arrowstream")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const (
	adminUser = "admin"
	adminPass = "admin-secret"
	// bannerWait bounds the server's start (a loaded CI machine is slow).
	bannerWait = 60 * time.Second
)

// env is one running `arrowstream serve` and the directories around it.
type env struct {
	t        *testing.T
	base     string // temporary directory holding the others
	data     string // the --data-dir root
	ck       string // the checkpoint root
	outside  string // a directory SQL must not reach
	flight   string // host:port
	httpURL  string // http://host:port/
	cmd      *exec.Cmd
	mu       sync.Mutex
	out      bytes.Buffer
	exited   chan error
	exitOnce sync.Once
}

var (
	bannerWeb    = regexp.MustCompile(`web UI +(http://\S+/)`)
	bannerFlight = regexp.MustCompile(`Flight SQL +grpc://(\S+)`)
)

// usersFile writes the users of every test: admin (every table), analyst
// (the table "shared" only).
func usersFile(t *testing.T, dir string) string {
	p := filepath.Join(dir, "users")
	body := adminUser + ":" + adminPass + "\nanalyst:analyst-secret\n"
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// startServe starts the server with authentication, a data root and a
// checkpoint root; extra flags are appended.
func startServe(t *testing.T, extra ...string) *env {
	t.Helper()
	base := t.TempDir()
	e := &env{t: t, base: base, data: filepath.Join(base, "data"), ck: filepath.Join(base, "ck"),
		outside: filepath.Join(base, "outside"), exited: make(chan error, 1)}
	for _, d := range []string{e.data, e.ck, e.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"serve", "--addr", "127.0.0.1:0", "--http", "127.0.0.1:0", "--status", "off",
		"--checkpoint", e.ck, "--data-dir", e.data, "--users-file", usersFile(t, base),
		"--grant", adminUser + "=*", "--grant", "analyst=shared"}
	e.cmd = exec.Command(binary, append(args, extra...)...)
	// Keep the test's environment from setting flags.
	e.cmd.Env = []string{"HOME=" + base, "PATH=" + os.Getenv("PATH")}
	ready := make(chan struct{})
	stdout, err := e.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	e.cmd.Stderr = writerFunc(e.write)
	if err := e.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		closed := false
		for sc.Scan() {
			line := sc.Text()
			e.write([]byte(line + "\n"))
			e.mu.Lock()
			if m := bannerWeb.FindStringSubmatch(line); m != nil {
				e.httpURL = m[1]
			}
			if m := bannerFlight.FindStringSubmatch(line); m != nil {
				e.flight = m[1]
			}
			e.mu.Unlock()
			if strings.HasPrefix(line, "Press Ctrl-C") && !closed {
				close(ready)
				closed = true
			}
		}
		e.exited <- e.cmd.Wait()
	}()
	t.Cleanup(func() {
		e.cmd.Process.Kill()
		<-e.exited
		if t.Failed() {
			t.Logf("server output:\n%s", e.output())
		}
	})
	select {
	case <-ready:
	case err := <-e.exited:
		e.exited <- err
		t.Fatalf("serve exited before serving: %v\n%s", err, e.output())
	case <-time.After(bannerWait):
		t.Fatalf("no banner after %v:\n%s", bannerWait, e.output())
	}
	return e
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

func (e *env) write(b []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.out.Write(b)
}

func (e *env) output() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.out.String()
}

// client is an authenticated Flight SQL client.
type client struct {
	*flightsql.Client
	ctx context.Context // carries the bearer token
}

func (e *env) client(user, password string) *client {
	e.t.Helper()
	cl, err := flightsql.NewClient(e.flight, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { cl.Close() })
	ctx, err := cl.Client.AuthenticateBasicToken(context.Background(), user, password)
	if err != nil {
		e.t.Fatalf("login as %s: %v", user, err)
	}
	return &client{Client: cl, ctx: ctx}
}

func (e *env) admin() *client { return e.client(adminUser, adminPass) }

// exec runs a statement and reads its whole result, returning the rows'
// cells as strings.
func (c *client) exec(ctx context.Context, sql string) ([][]string, error) {
	info, err := c.Execute(ctx, sql)
	if err != nil {
		return nil, err
	}
	var rows [][]string
	for _, ep := range info.Endpoint {
		rdr, err := c.DoGet(ctx, ep.Ticket)
		if err != nil {
			return nil, err
		}
		for rdr.Next() {
			rows = append(rows, cells(rdr.Record())...)
		}
		err = rdr.Err()
		rdr.Release()
		if err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// run is exec with the client's token and a generous deadline.
func (c *client) run(t *testing.T, sql string) ([][]string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(c.ctx, 2*time.Minute)
	defer cancel()
	return c.exec(ctx, sql)
}

// mustRun fails the test when sql fails.
func (c *client) mustRun(t *testing.T, sql string) [][]string {
	t.Helper()
	rows, err := c.run(t, sql)
	if err != nil {
		t.Fatalf("%s: %v", short(sql), err)
	}
	return rows
}

func cells(rec arrow.Record) [][]string {
	out := make([][]string, rec.NumRows())
	for i := range out {
		row := make([]string, rec.NumCols())
		for j := range row {
			row[j] = rec.Column(j).ValueStr(i)
		}
		out[i] = row
	}
	return out
}

func short(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// refused asserts that err is a gRPC error of code whose message holds
// every want.
func refused(t *testing.T, what string, err error, code codes.Code, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: accepted, want %v", what, code)
	}
	st, _ := status.FromError(err)
	if st.Code() != code {
		t.Errorf("%s: code %v (%v), want %v", what, st.Code(), err, code)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not contain %q", what, err, w)
		}
	}
}

// alive asserts the server still answers SQL and HTTP.
func (e *env) alive(t *testing.T) {
	t.Helper()
	select {
	case err := <-e.exited:
		e.exited <- err
		t.Fatalf("the server exited: %v", err)
	default:
	}
	rows := e.admin().mustRun(t, "SELECT 1 + 1 AS two")
	if len(rows) != 1 || rows[0][0] != "2" {
		t.Fatalf("SELECT 1 + 1 = %v", rows)
	}
	resp, err := http.Get(e.httpURL + "healthz")
	if err != nil {
		t.Fatalf("healthz: %v", err)
	}
	resp.Body.Close()
}

// waitFor polls cond until it holds or a generous deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// httpGet fetches a path with optional headers, returning the status and
// body.
func (e *env) httpGet(t *testing.T, path string, hdr map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.httpURL+strings.TrimPrefix(path, "/"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b)
}

// notExist asserts a path was not created.
func notExist(t *testing.T, p string) {
	t.Helper()
	if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s exists (err %v): the attack created it", p, err)
	}
}

// asADBC unwraps an adbc.Error.
func asADBC(err error, target *adbc.Error) bool { return errors.As(err, target) }
