package security

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"
)

// TestHTTPNeedsLogin: the UI's API and /metrics answer only logged-in
// users, with the Flight SQL users, tokens and read grants.
func TestHTTPNeedsLogin(t *testing.T) {
	e := startServe(t)
	c := e.admin()
	c.mustRun(t, "CREATE TABLE ticks USING rate OPTIONS (rowsPerSecond '10')")
	c.mustRun(t, "CREATE STREAMING TABLE secret AS SELECT value FROM STREAM ticks")
	c.mustRun(t, "CREATE STREAMING TABLE shared AS SELECT value FROM STREAM ticks")

	// Without credentials: nothing but /healthz.
	for _, p := range []string{"/api/tables/secret", "/api/tables", "/api/queries", "/metrics", "/"} {
		code, body := e.httpGet(t, p, nil)
		if code != http.StatusUnauthorized || !strings.Contains(body, "authentication required") {
			t.Errorf("GET %s without login: %d %q, want 401 naming the login", p, code, body)
		}
	}
	if code, _ := e.httpGet(t, "/api/tables/secret", map[string]string{"Authorization": "Bearer forged"}); code != http.StatusUnauthorized {
		t.Errorf("forged bearer token: %d, want 401", code)
	}
	if code, _ := e.httpGet(t, "/api/tables/secret", map[string]string{"Cookie": "arrowstream_token=forged"}); code != http.StatusUnauthorized {
		t.Errorf("forged cookie: %d, want 401", code)
	}
	req, _ := http.NewRequest(http.MethodGet, e.httpURL+"api/tables/secret", nil)
	req.SetBasicAuth(adminUser, "wrong")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong password: %v %v, want 401", resp.Status, err)
	} else {
		resp.Body.Close()
	}

	// The Flight SQL token works on HTTP.
	md, _ := metadata.FromOutgoingContext(c.ctx)
	bearer := md.Get("authorization")
	if len(bearer) == 0 {
		t.Fatal("no token from the Flight SQL handshake")
	}
	if code, body := e.httpGet(t, "/api/tables/secret", map[string]string{"Authorization": bearer[0]}); code != http.StatusOK || !strings.Contains(body, `"secret"`) {
		t.Errorf("Flight SQL token on HTTP: %d %q", code, body)
	}

	// POST /api/login sets a cookie that works.
	jar := loginCookie(t, e, adminUser, adminPass)
	if code, _ := e.httpGet(t, "/api/queries", map[string]string{"Cookie": jar}); code != http.StatusOK {
		t.Errorf("/api/queries with the login cookie: %d", code)
	}
	if code, body := e.httpGet(t, "/metrics", map[string]string{"Cookie": jar}); code != http.StatusOK || !strings.Contains(body, "arrowstream_") {
		t.Errorf("/metrics with the login cookie: %d", code)
	}

	// The analyst's grant ("shared") holds on HTTP as on Flight SQL.
	aj := loginCookie(t, e, "analyst", "analyst-secret")
	if code, _ := e.httpGet(t, "/api/tables/secret", map[string]string{"Cookie": aj}); code != http.StatusNotFound {
		t.Errorf("analyst reading secret: %d, want 404", code)
	}
	if code, body := e.httpGet(t, "/api/tables/shared", map[string]string{"Cookie": aj}); code != http.StatusOK {
		t.Errorf("analyst reading shared: %d %s", code, body)
	}
	code, body := e.httpGet(t, "/api/tables", map[string]string{"Cookie": aj})
	var list []struct{ Name string }
	if err := json.Unmarshal([]byte(body), &list); code != http.StatusOK || err != nil || len(list) != 1 || list[0].Name != "shared" {
		t.Errorf("analyst's table list: %d %s, want only shared", code, body)
	}
	for _, p := range []string{"/api/queries", "/metrics"} {
		if code, _ := e.httpGet(t, p, map[string]string{"Cookie": aj}); code != http.StatusForbidden {
			t.Errorf("analyst GET %s: %d, want 403", p, code)
		}
	}
	_, err := e.client("analyst", "analyst-secret").run(t, "SELECT * FROM secret")
	if err == nil || !strings.Contains(err.Error(), "secret") {
		t.Errorf("analyst reading secret over Flight SQL: %v, want not found", err)
	}
	e.alive(t)
}

// loginCookie logs in with POST /api/login (a form) and returns the
// Cookie header to send.
func loginCookie(t *testing.T, e *env, user, pass string) string {
	t.Helper()
	resp, err := http.PostForm(e.httpURL+"api/login", url.Values{"user": {user}, "password": {pass}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login as %s: %s", user, resp.Status)
	}
	for _, c := range resp.Cookies() {
		if c.Name == "arrowstream_token" {
			if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
				t.Errorf("login cookie %+v: want HttpOnly and SameSite=Strict", c)
			}
			return c.Name + "=" + c.Value
		}
	}
	t.Fatalf("login as %s set no cookie", user)
	return ""
}

// TestMetricsOpenFlag: --metrics-open serves /metrics alone without a
// login.
func TestMetricsOpenFlag(t *testing.T) {
	e := startServe(t, "--metrics-open")
	if code, _ := e.httpGet(t, "/metrics", nil); code != http.StatusOK {
		t.Errorf("/metrics with --metrics-open: %d, want 200", code)
	}
	if code, _ := e.httpGet(t, "/api/queries", nil); code != http.StatusUnauthorized {
		t.Errorf("/api/queries with --metrics-open: %d, want 401", code)
	}
	e.alive(t)
}

// TestExposedHTTPRefused: a non-loopback --http address needs
// authentication and TLS, as the Flight SQL port does.
func TestExposedHTTPRefused(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"no auth, no TLS", []string{"--http", "0.0.0.0:0"}, []string{"0.0.0.0:0", "authentication", "TLS", "--allow-insecure"}},
		{"auth, no TLS", []string{"--http", "0.0.0.0:0", "--users-file", usersFile(t, dir)}, []string{"0.0.0.0:0", "--tls-cert"}},
	}
	for _, c := range cases {
		args := append([]string{"serve", "--addr", "127.0.0.1:0", "--status", "off", "--checkpoint", filepath.Join(dir, "ck")}, c.args...)
		cmd := exec.Command(binary, args...)
		cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}
		done := make(chan struct{})
		var out []byte
		var err error
		go func() {
			out, err = cmd.CombinedOutput()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(2 * time.Minute):
			cmd.Process.Kill()
			<-done
			t.Fatalf("%s: the server started (output %s)", c.name, out)
		}
		if err == nil {
			t.Errorf("%s: exit status 0, want a refusal", c.name)
		}
		for _, w := range c.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("%s: output %q does not contain %q", c.name, out, w)
			}
		}
	}
}
