package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream/access"
	"github.com/arrowstream/arrowstream/server"
)

// This file holds the governance settings of a server: what SQL users may
// touch (--data-dir, --allow-connect), who they are on every port
// (--users-file, --grant, TLS) and how much work they may start (quotas).

// listFlag is a repeatable flag whose values may also be comma lists.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
}

// governFlags are the security and quota flags of run and serve.
type governFlags struct {
	dataDirs     listFlag
	allowConnect listFlag
	usersFile    string
	grants       stringList
	tlsCert      string
	tlsKey       string
	metricsOpen  bool
	limits       server.Limits
}

func addGovernFlags(fs *flag.FlagSet) *governFlags {
	g := &governFlags{}
	fs.Var(&g.dataDirs, "data-dir", "`directory` SQL file sources and sinks may use (repeatable or a comma list; none: no file access over SQL)")
	fs.Var(&g.allowConnect, "allow-connect", "`host:port` endpoints socket and Kafka sources and sinks may reach besides loopback (repeatable or a comma list)")
	fs.StringVar(&g.usersFile, "users-file", "", "`file` of user:password (or user:<hash>) lines; with --user or alone")
	fs.Var(&g.grants, "grant", "read grant `user=table[,table...]` (\"*\" for every table, system tables as system.<name>; repeatable);\nwithout any, every user reads every table")
	fs.StringVar(&g.tlsCert, "tls-cert", "", "PEM certificate chain `file` for TLS on the Flight SQL and HTTP ports (with --tls-key)")
	fs.StringVar(&g.tlsKey, "tls-key", "", "PEM private key `file` of --tls-cert")
	fs.BoolVar(&g.metricsOpen, "metrics-open", false, "serve /metrics without authentication (for a Prometheus scraper without credentials)")
	l := &g.limits
	fs.IntVar(&l.MaxStreamingTables, "max-streaming-tables", server.DefaultMaxStreamingTables, "streaming tables the server runs at most (0: no bound)")
	fs.IntVar(&l.MaxStreamingTablesPerUser, "max-streaming-tables-per-user", server.DefaultMaxStreamingTablesPerUser, "streaming tables one user may create (0: no bound)")
	fs.IntVar(&l.MaxConcurrentQueries, "max-concurrent-queries", server.DefaultMaxConcurrentQueries, "SQL statements the server runs at once (0: no bound)")
	fs.IntVar(&l.MaxConcurrentQueriesPerUser, "max-concurrent-queries-per-user", server.DefaultMaxConcurrentQueriesPerUser, "SQL statements one user runs at once (0: no bound)")
	fs.Int64Var(&l.MaxStateBytes, "max-state-bytes", 0, "total state `bytes` of all streaming tables; at it no new streaming table starts, past it the table that grew most is stopped (0: no bound)")
	fs.Int64Var(&l.MaxStateBytesPerUser, "max-state-bytes-per-user", 0, "state `bytes` of one user's streaming tables; at it the user starts no new one, past it the user's table that grew most is stopped (0: no bound)")
	fs.Int64Var(&l.MaxCheckpointBytes, "max-checkpoint-bytes", 0, "total checkpoint `bytes` of all streaming tables; at it no new streaming table starts, past it the table that grew most is stopped (0: no bound)")
	fs.Int64Var(&l.MaxCheckpointBytesPerUser, "max-checkpoint-bytes-per-user", 0, "checkpoint `bytes` of one user's streaming tables; at it the user starts no new one, past it the user's table that grew most is stopped (0: no bound)")
	fs.DurationVar(&l.QueryTimeout, "query-timeout", server.DefaultQueryTimeout, "bound a SQL statement from planning to the end of its result stream to this `duration` (negative: no bound)")
	fs.DurationVar(&l.StallTimeout, "stall-timeout", server.DefaultStallTimeout, "cancel a result stream whose client reads nothing for this `duration`")
	fs.IntVar(&l.MaxPreparedStatements, "max-prepared-statements", server.DefaultMaxPreparedStatements, "open Flight SQL prepared statements the server holds at most")
	fs.IntVar(&l.MaxPreparedStatementsPerUser, "max-prepared-statements-per-user", server.DefaultMaxPreparedStatementsPerUser, "open Flight SQL prepared statements one user holds at most")
	fs.Int64Var(&l.MaxPreparedBytesPerUser, "max-prepared-bytes-per-user", server.DefaultMaxPreparedBytesPerUser, "SQL text `bytes` one user's open Flight SQL prepared statements hold at most")
	fs.IntVar(&l.MaxStatementBytes, "max-statement-bytes", server.DefaultMaxStatementBytes, "longest SQL statement accepted, in `bytes`")
	fs.Int64Var(&l.ReturnMemoryBytes, "return-memory", server.DefaultReturnMemoryBytes, "once queries have freed this many `bytes` (or a table is dropped), return free memory to the OS, at most once a second (negative: never)")
	return g
}

func (g *governFlags) validate() error {
	if (g.tlsCert == "") != (g.tlsKey == "") {
		return errors.New("--tls-cert and --tls-key go together")
	}
	l := g.limits
	if l.MaxStreamingTables < 0 || l.MaxStreamingTablesPerUser < 0 || l.MaxConcurrentQueries < 0 || l.MaxConcurrentQueriesPerUser < 0 ||
		l.MaxStateBytes < 0 || l.MaxStateBytesPerUser < 0 || l.MaxCheckpointBytes < 0 || l.MaxCheckpointBytesPerUser < 0 ||
		l.StallTimeout < 0 || l.MaxStatementBytes < 0 ||
		l.MaxPreparedStatements < 0 || l.MaxPreparedStatementsPerUser < 0 || l.MaxPreparedBytesPerUser < 0 {
		return errors.New("quota flags (--max-*, --stall-timeout) must not be negative")
	}
	return nil
}

// policy is the access policy of a server's session: file access only
// under --data-dir, checkpoints only under the checkpoint root, network
// endpoints on loopback or in --allow-connect.
func (g *governFlags) policy(ckRoot string) (*access.Policy, error) {
	return access.New(access.Config{DataDirs: g.dataDirs, CheckpointRoot: ckRoot, AllowConnect: g.allowConnect, AllowLoopback: true})
}

// authenticator is the users, tokens and grants shared by the Flight SQL
// and HTTP ports (nil without users).
func (g *governFlags) authenticator(fc *flightConfig, log *slog.Logger) (*server.Authenticator, error) {
	grants, err := server.ParseGrants(g.grants)
	if err != nil {
		return nil, fmt.Errorf("--grant: %w", err)
	}
	if fc.user == "" && g.usersFile == "" {
		if grants != nil {
			return nil, errors.New("--grant needs users (--user or --users-file)")
		}
		return nil, nil
	}
	return server.NewAuthenticator(server.AuthConfig{Users: fc.users(), UsersFile: g.usersFile, ReadGrants: grants}, log)
}

func (g *governFlags) tls() server.TLSConfig {
	return server.TLSConfig{CertFile: g.tlsCert, KeyFile: g.tlsKey}
}

// checkHTTPExposure refuses a non-loopback HTTP address without
// authentication and TLS, as the Flight SQL server does.
func checkHTTPExposure(ctx context.Context, addr string, auth *server.Authenticator, tls bool, allowInsecure bool) error {
	if allowInsecure || (auth != nil && tls) {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %q: %w", addr, err)
	}
	if host != "" {
		if strings.EqualFold(host, "localhost") {
			return nil
		}
		if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
			return nil
		}
		if ip := net.ParseIP(host); ip == nil {
			ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
			if err == nil && len(ips) > 0 && allLoopback(ips) {
				return nil
			}
		}
	}
	var missing []string
	if auth == nil {
		missing = append(missing, "authentication (--user or --users-file)")
	}
	if !tls {
		missing = append(missing, "TLS (--tls-cert, --tls-key)")
	}
	return fmt.Errorf("--http %q is not a loopback address: refusing to serve it without %s (or set --allow-insecure)", addr, strings.Join(missing, " and "))
}

func allLoopback(ips []net.IPAddr) bool {
	for _, ip := range ips {
		if !ip.IP.IsLoopback() {
			return false
		}
	}
	return true
}

// tokenCookie is the cookie the HTTP login sets.
const tokenCookie = "arrowstream_token"

// cookieTTL bounds the login cookie.
func cookieTTL(a *server.Authenticator) time.Duration { return a.TokenTTL() }
