package server

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"google.golang.org/grpc/codes"
)

// readGrants holds AuthConfig.ReadGrants: per user, the tables (normalised
// names) the user may read; "*" grants every table. A nil readGrants means
// no restriction.
type readGrants map[string]map[string]bool

func newReadGrants(cfg map[string][]string) readGrants {
	if cfg == nil {
		return nil
	}
	g := readGrants{}
	for user, tables := range cfg {
		set := map[string]bool{}
		for _, t := range tables {
			set[normTable(t)] = true
		}
		g[user] = set
	}
	return g
}

// normTable is the form table names are compared in: case-insensitive,
// with the default schema's prefix dropped (system tables keep theirs).
func normTable(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	return strings.TrimPrefix(n, DefaultSchema+".")
}

// filter returns the predicate of the tables user may read, or nil when
// the user may read every table.
func (g readGrants) filter(user string) func(string) bool {
	if g == nil {
		return nil
	}
	set := g[user]
	if set["*"] {
		return nil
	}
	return func(name string) bool { return set[normTable(name)] }
}

// readFilter is the calling user's table predicate (nil: every table).
func (s *Server) readFilter(ctx context.Context) func(string) bool {
	return s.grants.filter(UserFromContext(ctx))
}

// mayRead reports whether the calling user may read (and see) a table.
func (s *Server) mayRead(ctx context.Context, name string) bool {
	f := s.readFilter(ctx)
	return f == nil || f(name)
}

// checkUnrestricted refuses what users with limited grants may not do:
// commands (DDL can read any table through CREATE ... AS SELECT) and
// ingest.
func (s *Server) checkUnrestricted(ctx context.Context, what string) error {
	if s.readFilter(ctx) == nil {
		return nil
	}
	return statusf(codes.PermissionDenied, "%s: user %q may only read the tables granted to it (ReadGrants); commands and ingest need a grant of \"*\"",
		what, UserFromContext(ctx))
}

// validateGrants checks ReadGrants against the configured users.
func validateGrants(a AuthConfig) error {
	if a.ReadGrants == nil {
		return nil
	}
	if !a.enabled() {
		return errors.New("ReadGrants need authentication (Users or UsersFile)")
	}
	var bad []string
	for user := range a.ReadGrants {
		if _, ok := a.Users[user]; !ok && a.UsersFile == "" {
			bad = append(bad, user)
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		return fmt.Errorf("ReadGrants name unknown users: %s", strings.Join(bad, ", "))
	}
	return nil
}
