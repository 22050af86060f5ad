package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"
)

// Authenticator is a user table with its token store and read grants,
// shareable between the Flight SQL server (Config.Authenticator) and other
// listeners of the same process (the HTTP UI and API), so that one login
// works on every port and one grant applies everywhere.
type Authenticator struct {
	a      *authenticator
	grants readGrants
	ttl    time.Duration
}

// NewAuthenticator loads the users of cfg (cfg.Users and cfg.UsersFile)
// and its read grants. It needs at least one user.
func NewAuthenticator(cfg AuthConfig, log *slog.Logger) (*Authenticator, error) {
	if !cfg.enabled() {
		return nil, errors.New("server: authenticator: no users (Users or UsersFile)")
	}
	if err := validateGrants(cfg); err != nil {
		return nil, fmt.Errorf("server: authenticator: %w", err)
	}
	if cfg.TokenTTL <= 0 {
		cfg.TokenTTL = DefaultTokenTTL
	}
	if log == nil {
		log = slog.Default()
	}
	a, err := newAuthenticator(cfg, log.With("component", "auth"))
	if err != nil {
		return nil, err
	}
	return &Authenticator{a: a, grants: newReadGrants(mergeGrants(cfg.ReadGrants, a.fileGrants)), ttl: cfg.TokenTTL}, nil
}

// Login checks a password and issues a bearer token (valid on every port
// sharing this Authenticator). The error does not say whether the user
// exists.
func (x *Authenticator) Login(ctx context.Context, user, password string) (string, error) {
	return x.a.login(ctx, user, password)
}

// CheckToken returns the user of a valid token.
func (x *Authenticator) CheckToken(token string) (string, bool) {
	return x.a.check(token)
}

// TokenTTL is the lifetime of issued tokens.
func (x *Authenticator) TokenTTL() time.Duration { return x.ttl }

// MayRead reports whether user may read (and see) table; system tables
// are named "system.<name>".
func (x *Authenticator) MayRead(user, table string) bool {
	f := x.grants.filter(user)
	return f == nil || f(table)
}

// Unrestricted reports whether user may read every table (a grant of "*",
// or no grants configured): such users may also run commands.
func (x *Authenticator) Unrestricted(user string) bool { return x.grants.filter(user) == nil }

// ParseGrants reads read grants as the command line gives them:
// "user=table1,table2" per entry ("*" for every table, system tables as
// system.<name>). A user may appear in several entries.
func ParseGrants(entries []string) (map[string][]string, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	out := map[string][]string{}
	for _, e := range entries {
		for _, one := range strings.Split(e, ";") {
			one = strings.TrimSpace(one)
			if one == "" {
				continue
			}
			user, tables, ok := strings.Cut(one, "=")
			user = strings.TrimSpace(user)
			if !ok || user == "" {
				return nil, fmt.Errorf("grant %q: want user=table[,table...]", one)
			}
			if _, seen := out[user]; !seen {
				out[user] = []string{}
			}
			for _, t := range strings.Split(tables, ",") {
				if t = strings.TrimSpace(t); t != "" {
					out[user] = append(out[user], t)
				}
			}
		}
	}
	for _, ts := range out {
		sort.Strings(ts)
	}
	return out, nil
}
