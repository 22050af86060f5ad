package main

import (
	"context"
	"flag"
	"runtime/debug"

	"github.com/arrowstream/arrowstream/server"
	"google.golang.org/grpc"
)

// This file plugs the Flight SQL server (package server) into run and
// serve: the server's SQL engine is the session's planner, and DDL goes
// through engine.SQL so that tables created over Flight SQL show their
// definition in the web UI.

// flightWired reports whether startFlightServer serves Flight SQL.
const flightWired = true

// flightServer is a running Flight SQL server.
type flightServer interface {
	// Addr is the address it listens on (host:port).
	Addr() string
	// Stop stops accepting calls and waits for running ones until ctx
	// ends, then cancels them.
	Stop(ctx context.Context) error
	// StopQueries cancels the running statements (the start of a stop).
	StopQueries()
}

// flightConfig are the Flight SQL server's command-line settings.
type flightConfig struct {
	addr          string
	user          string
	password      string
	allowInsecure bool
	memoryLimit   int64
	queryMemory   int64
	memoryTarget  float64 // --memory-target (memtarget.go)
	hugePages     bool    // --huge-pages (hugepages.go)
}

func addFlightFlags(fs *flag.FlagSet) *flightConfig {
	c := &flightConfig{}
	fs.StringVar(&c.addr, "addr", "127.0.0.1:31337", "Flight SQL listen `address` (host:port; port 0 picks a free one)")
	fs.StringVar(&c.user, "user", "", "require this Flight SQL user (HTTP basic auth; with --password)")
	fs.StringVar(&c.password, "password", "", "the password of --user (prefer the environment variable)")
	fs.BoolVar(&c.allowInsecure, "allow-insecure", false, "allow serving a non-loopback address without authentication or TLS")
	fs.Int64Var(&c.memoryLimit, "memory-limit", defaultMemoryLimit(), "process memory limit in `bytes`: queries together hold at most this much, and new queries and ingest are refused while the heap is past it; also the Go runtime's soft limit (default: 3/4 of RAM or of the cgroup limit; 0: none)")
	fs.Float64Var(&c.memoryTarget, "memory-target", 0, "keep the Go runtime's soft memory limit at its memory with nothing held plus this `ratio` per byte the tables and streaming state hold, at most --memory-limit (1.25 keeps the process near 1.5× what it holds; costs collector CPU, docs/operations.md; 0: off, the limit is --memory-limit)")
	fs.BoolVar(&c.hugePages, "huge-pages", false, hugePagesUsage)
	fs.Int64Var(&c.queryMemory, "query-memory", -1, "per-query memory limit in `bytes`: over it a query fails with RESOURCE_EXHAUSTED (default: a quarter of --memory-limit; 0: none)")
	return c
}

// users is the user table of the server's basic auth (nil: none).
func (c *flightConfig) users() map[string]string {
	if c.user == "" {
		return nil
	}
	return map[string]string{c.user: c.password}
}

// startFlightServer starts the Flight SQL server over e.
func startFlightServer(ctx context.Context, e *engine, cfg *flightConfig, gov *governFlags, auth *server.Authenticator) (flightServer, error) {
	sc := server.ForSession(e.session, e.sinks)
	if se, ok := sc.Engine.(*server.SessionEngine); ok {
		se.RunStatementsWith(e.SQL)
		if e.cluster != nil {
			t := server.ClusterMembersTable(clusterLister{e.cluster})
			rt := server.ClusterRebalancesTable(clusterLister{e.cluster})
			se.AddSystemTables(t, rt)
			sc.SystemTables = append(sc.SystemTables, t, rt)
			sc.Cluster = clusterLister{e.cluster}
		}
	}
	sc.Addr = cfg.addr
	sc.Authenticator = auth
	sc.TLS = gov.tls()
	sc.Limits = gov.limits
	sc.AllowInsecure = cfg.allowInsecure
	sc.Limits.ServerMemoryBytes = max(cfg.memoryLimit, 0)
	sc.Limits.QueryMemoryBytes = cfg.queryMemory
	if cfg.queryMemory < 0 {
		sc.Limits.QueryMemoryBytes = sc.Limits.ServerMemoryBytes / 4
	}
	if cfg.memoryLimit > 0 && cfg.memoryTarget == 0 {
		// The garbage collector works harder near the limit rather than
		// letting the heap reach it. (A memory target sets the limit
		// itself, with --memory-limit as its ceiling.)
		debug.SetMemoryLimit(cfg.memoryLimit)
	}
	sc.Logger = e.logger
	sc.UnaryInterceptors = []grpc.UnaryServerInterceptor{e.metrics.UnaryInterceptor()}
	sc.StreamInterceptors = []grpc.StreamServerInterceptor{e.metrics.StreamInterceptor()}
	srv, err := server.New(sc)
	if err != nil {
		return nil, err
	}
	// Streaming queries started from now on run on accounting allocators
	// bounded by --query-memory and --memory-limit.
	e.session.SetStreamingAllocator(srv.StreamingAllocator)
	if err := srv.Start(ctx); err != nil {
		return nil, err
	}
	return flightAdapter{srv}, nil
}

// flightAdapter presents a *server.Server as a flightServer.
type flightAdapter struct{ s *server.Server }

func (f flightAdapter) Addr() string                   { return f.s.Addr().String() }
func (f flightAdapter) Stop(ctx context.Context) error { return f.s.Stop(ctx) }
func (f flightAdapter) StopQueries()                   { f.s.StopQueries() }
