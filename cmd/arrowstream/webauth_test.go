package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/server"
)

// TestWebAuth checks every way in and out of the HTTP port's login, and
// that grants apply: admin reads everything, viewer only the table "t".
func TestWebAuth(t *testing.T) {
	e := newTestEngine(t)
	auth, err := server.NewAuthenticator(server.AuthConfig{
		Users:      map[string]string{"admin": "pw-a", "viewer": "pw-v"},
		ReadGrants: map[string][]string{"admin": {"*"}, "viewer": {"t"}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(newWebHandlerAuth(e, &webAuth{auth: auth}))
	defer srv.Close()
	get := func(path string, hdr ...string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	tok, err := auth.Login(context.Background(), "admin", "pw-a")
	if err != nil {
		t.Fatal(err)
	}
	vtok, _ := auth.Login(context.Background(), "viewer", "pw-v")
	cases := []struct {
		name, path string
		hdr        []string
		want       int
	}{
		{"healthz is open", "/healthz", nil, 200},
		{"api without login", "/api/tables", nil, 401},
		{"ui without login", "/", nil, 401},
		{"metrics without login", "/metrics", nil, 401},
		{"bearer", "/api/tables", []string{"Authorization", "Bearer " + tok}, 200},
		{"bad bearer", "/api/tables", []string{"Authorization", "Bearer x" + tok}, 401},
		{"cookie", "/api/queries", []string{"Cookie", tokenCookie + "=" + tok}, 200},
		{"bad cookie", "/api/queries", []string{"Cookie", tokenCookie + "=nope"}, 401},
		{"other scheme", "/api/queries", []string{"Authorization", "Digest x"}, 401},
		{"viewer: hidden table", "/api/tables/secret", []string{"Authorization", "Bearer " + vtok}, 404},
		{"viewer: queries", "/api/queries", []string{"Authorization", "Bearer " + vtok}, 403},
		{"viewer: metrics", "/metrics", []string{"Authorization", "Bearer " + vtok}, 403},
		{"admin: metrics", "/metrics", []string{"Authorization", "Bearer " + tok}, 200},
	}
	for _, c := range cases {
		if got := get(c.path, c.hdr...); got != c.want {
			t.Errorf("%s: GET %s = %d, want %d", c.name, c.path, got, c.want)
		}
	}
	// Basic credentials log in and set the cookie.
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/tables", nil)
	req.SetBasicAuth("admin", "pw-a")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || len(resp.Cookies()) == 0 || resp.Cookies()[0].Name != tokenCookie {
		t.Errorf("basic login: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	req.SetBasicAuth("admin", "wrong")
	if resp, err = http.DefaultClient.Do(req); err != nil || resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("wrong basic password: %v %v, want 401 with a challenge", resp.StatusCode, err)
	}
	resp.Body.Close()
	// POST /api/login: form, JSON, refusals.
	if resp, _ = http.PostForm(srv.URL+"/api/login", url.Values{"user": {"admin"}, "password": {"pw-a"}}); resp.StatusCode != 200 {
		t.Errorf("form login: %d", resp.StatusCode)
	}
	resp.Body.Close()
	if resp, _ = http.Post(srv.URL+"/api/login", "application/json", strings.NewReader(`{"user":"viewer","password":"pw-v"}`)); resp.StatusCode != 200 {
		t.Errorf("JSON login: %d", resp.StatusCode)
	}
	resp.Body.Close()
	if resp, _ = http.Post(srv.URL+"/api/login", "application/json", strings.NewReader(`{"user":"viewer","password":"no"}`)); resp.StatusCode != 401 {
		t.Errorf("JSON login with a wrong password: %d", resp.StatusCode)
	}
	resp.Body.Close()
	if resp, _ = http.Post(srv.URL+"/api/login", "application/json", strings.NewReader(strings.Repeat("x", 1<<20))); resp.StatusCode != 400 {
		t.Errorf("huge login body: %d, want 400", resp.StatusCode)
	}
	resp.Body.Close()
	if got := get("/api/login"); got != http.StatusMethodNotAllowed {
		t.Errorf("GET /api/login: %d", got)
	}
}

func TestCheckHTTPExposure(t *testing.T) {
	auth, err := server.NewAuthenticator(server.AuthConfig{Users: map[string]string{"a": "b"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cases := []struct {
		addr     string
		auth     *server.Authenticator
		tls, ins bool
		ok       bool
	}{
		{"127.0.0.1:0", nil, false, false, true},
		{"localhost:0", nil, false, false, true},
		{"[::1]:0", nil, false, false, true},
		{"0.0.0.0:4040", nil, false, false, false},
		{":4040", nil, false, false, false},
		{"0.0.0.0:4040", auth, false, false, false},
		{"0.0.0.0:4040", nil, true, false, false},
		{"0.0.0.0:4040", auth, true, false, true},
		{"0.0.0.0:4040", nil, false, true, true},
	}
	for _, c := range cases {
		err := checkHTTPExposure(ctx, c.addr, c.auth, c.tls, c.ins)
		if (err == nil) != c.ok {
			t.Errorf("checkHTTPExposure(%q, auth=%v, tls=%v, insecure=%v) = %v, want ok=%v", c.addr, c.auth != nil, c.tls, c.ins, err, c.ok)
		}
	}
}
