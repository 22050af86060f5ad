package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUsersFileGrants: grant lines of a users file grant reads as --grant
// does, add to AuthConfig.ReadGrants, and apply in a server configured by
// AuthConfig as in a shared Authenticator.
func TestUsersFileGrants(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users")
	body := "admin:pw-a\nanalyst:pw-b\nviewer:pw-c\n# grants\ngrant admin=*\ngrant analyst=shared, Clicks\ngrant analyst=system.streaming_queries\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	auth, err := NewAuthenticator(AuthConfig{UsersFile: path, ReadGrants: map[string][]string{"viewer": {"v"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, Config{Auth: AuthConfig{UsersFile: path}})
	for _, tc := range []struct {
		user, table string
		shared, own bool // allowed by the shared Authenticator, by the server's own
	}{
		{"admin", "anything", true, true},
		{"analyst", "shared", true, true},
		{"analyst", "clicks", true, true},
		{"analyst", "system.streaming_queries", true, true},
		{"analyst", "secret", false, false},
		{"viewer", "v", true, false}, // the flag grant only in the first
		{"viewer", "shared", false, false},
	} {
		if got := auth.MayRead(tc.user, tc.table); got != tc.shared {
			t.Errorf("Authenticator: %s reads %s: %v, want %v", tc.user, tc.table, got, tc.shared)
		}
		f := srv.grants.filter(tc.user)
		if got := f == nil || f(tc.table); got != tc.own {
			t.Errorf("server: %s reads %s: %v, want %v", tc.user, tc.table, got, tc.own)
		}
	}
}

// TestUsersFileBadGrants: every malformed grant line is refused, naming
// the file and line.
func TestUsersFileBadGrants(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users")
	for _, tc := range []struct{ body, want string }{
		{"a:pw\ngrant b=t\n", `users:2: grant for unknown user "b"`},
		{"a:pw\ngrant =t\n", "users:2: grant"},
		{"a:pw\ngrant a\n", "users:2: grant"},
		{"a:pw\nb:pw\ngrant a=t;b=u\n", "users:3: a grant line grants one user"},
		{"a:pw\ngrant\n", "users:2: want user:password"},
	} {
		if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := NewAuthenticator(AuthConfig{UsersFile: path}, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.body, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "pw") {
			t.Errorf("%q: error %q echoes a secret", tc.body, err)
		}
	}
}
