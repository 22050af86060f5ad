package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/arrowstream/arrowstream/server/pgwire"
)

// This file plugs the PostgreSQL endpoint (server/pgwire) into run and
// serve: a second front end to the Flight SQL server's session engine,
// with its users, grants, TLS certificate and limits.

// defaultPGAddr is run's PostgreSQL address (PostgreSQL's port plus one,
// so that a local PostgreSQL keeps 5432).
const defaultPGAddr = "127.0.0.1:5433"

// pgConfig are the PostgreSQL endpoint's command-line settings.
type pgConfig struct {
	addr       string
	def        string // the default of addr
	cleartext  bool
	maxConns   int
	maxPerUser int
	login      time.Duration
	maxMessage int
	maxHeld    int64
}

func addPGFlags(fs *flag.FlagSet, def string) *pgConfig {
	c := &pgConfig{def: def}
	usage := "PostgreSQL wire-protocol listen `address` (psql, psycopg, pgx, JDBC; empty: none)"
	if def == "" {
		usage += "; off unless given"
	} else {
		usage += ";\nif the default port is taken, run goes on without it"
	}
	fs.StringVar(&c.addr, "pg", def, usage)
	fs.BoolVar(&c.cleartext, "pg-cleartext-password", false, "ask PostgreSQL clients for a cleartext password (TLS connections only) instead of SCRAM-SHA-256")
	fs.IntVar(&c.maxConns, "pg-max-connections", pgwire.DefaultMaxConnections, "PostgreSQL connections served at once")
	fs.IntVar(&c.maxPerUser, "pg-max-connections-per-user", pgwire.DefaultMaxConnectionsPerUser, "PostgreSQL connections one user holds at once, counted after login (0: no bound)")
	fs.DurationVar(&c.login, "pg-login-timeout", pgwire.DefaultLoginTimeout, "how long a PostgreSQL client has to finish its startup and login (a silent or stalled client is then disconnected, freeing its connection)")
	fs.IntVar(&c.maxMessage, "pg-max-message-bytes", pgwire.DefaultMaxMessageBytes, "largest PostgreSQL client message in `bytes`")
	fs.Int64Var(&c.maxHeld, "pg-max-prepared-bytes", pgwire.DefaultMaxPreparedBytes, "`bytes` one PostgreSQL connection's prepared statements and named portals hold at most (text and bound values)")
	return c
}

// startPG starts the PostgreSQL endpoint over the Flight SQL server's
// session engine.
func (a *app) startPG(ctx context.Context, c *pgConfig, fc *flightConfig) error {
	if c.addr == "" {
		return nil
	}
	fa, ok := a.flight.(flightAdapter)
	if !ok {
		if c.addr == c.def {
			return nil // run's default endpoint goes with its Flight SQL server (--addr "")
		}
		return errors.New("--pg serves the Flight SQL server's session: it needs --addr")
	}
	if c.maxPerUser < 0 {
		return fmt.Errorf("--pg-max-connections-per-user %d: want 0 (no bound) or more", c.maxPerUser)
	}
	if c.login <= 0 {
		return fmt.Errorf("--pg-login-timeout %s: want a positive duration", c.login)
	}
	perUser := c.maxPerUser
	if perUser == 0 {
		perUser = -1 // the flag's 0 is no bound; pgwire's is its default
	}
	cfg := pgwire.Config{Addr: c.addr, AllowInsecure: fc.allowInsecure, MaxConnections: c.maxConns, MaxConnectionsPerUser: perUser,
		LoginTimeout: c.login, MaxMessageBytes: c.maxMessage, MaxPreparedBytes: c.maxHeld}
	if c.cleartext {
		cfg.PasswordAuth = "password"
	}
	s, err := pgwire.New(fa.s.Frontend(), cfg)
	if err != nil {
		return fmt.Errorf("PostgreSQL endpoint: %w", err)
	}
	if err := s.Start(ctx); err != nil {
		if c.addr == c.def && c.def != "" && errors.Is(err, syscall.EADDRINUSE) {
			a.logger.Warn("PostgreSQL endpoint not started: its default port is taken (set --pg to another address)", "addr", c.addr)
			return nil
		}
		return fmt.Errorf("PostgreSQL endpoint: %w", addrInUse("pg", c.addr, err))
	}
	a.pg = s
	return nil
}

func pgHost(addr net.Addr) string {
	h, _, _ := net.SplitHostPort(addr.String())
	return h
}

func pgPort(addr net.Addr) string {
	_, p, _ := net.SplitHostPort(addr.String())
	return p
}
