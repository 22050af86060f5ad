package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"google.golang.org/grpc"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
)

// Defaults of Limits and Config.
const (
	// DefaultMaxMessageBytes is the largest gRPC message the server sends
	// or accepts. It matches the ADBC client's default receive limit
	// (16 MiB): a larger record batch would fail the client's read.
	DefaultMaxMessageBytes = 16 << 20
	// DefaultMaxHeaderBytes bounds the metadata (HTTP/2 header list) of
	// one call. Clients send a bearer token or basic credentials and a few
	// gRPC headers, well under a kilobyte; gRPC's own default (16 MiB) let
	// an unauthenticated handshake make the server decode and hold (and
	// log, as the user name) megabytes per call.
	DefaultMaxHeaderBytes = 64 << 10
	// DefaultMaxConcurrentStreams bounds the DoGet and DoPut streams served
	// at once.
	DefaultMaxConcurrentStreams = 256
	// DefaultQueryTimeout bounds planning, running and streaming a query.
	DefaultQueryTimeout = 5 * time.Minute
	// DefaultMaxPreparedStatements bounds the open prepared statements.
	DefaultMaxPreparedStatements = 10000
	// DefaultMaxPreparedStatementsPerUser bounds one user's open prepared
	// statements, so that one user cannot take every slot of
	// DefaultMaxPreparedStatements from the others.
	DefaultMaxPreparedStatementsPerUser = 1000
	// DefaultMaxPreparedBytesPerUser bounds the SQL text one user's open
	// prepared statements hold (each may be MaxStatementBytes long; the
	// texts stay on the heap until closed or idle).
	DefaultMaxPreparedBytesPerUser = 64 << 20
	// DefaultPreparedStatementIdle closes prepared statements unused this
	// long (clients that never close them).
	DefaultPreparedStatementIdle = 30 * time.Minute
	// DefaultTokenTTL is how long a bearer token issued by the handshake
	// stays valid.
	DefaultTokenTTL = 12 * time.Hour
	// DefaultMaxStatementBytes is the longest SQL statement accepted.
	DefaultMaxStatementBytes = 1 << 20
	// DefaultStallTimeout cancels result streams nobody reads.
	DefaultStallTimeout = 30 * time.Second
	// DefaultCatalog is the Flight SQL catalog name of every table.
	DefaultCatalog = "arrowstream"
)

// Limits protect the server from heavy clients. A query that exceeds a
// limit fails with a clear error; the server stays up.
type Limits struct {
	// MaxMessageBytes is the largest message sent or received (0:
	// DefaultMaxMessageBytes). Outgoing record batches are sliced so that
	// each message stays under half of it.
	MaxMessageBytes int
	// MaxHeaderBytes bounds one call's metadata, the HTTP/2 header list
	// (0: DefaultMaxHeaderBytes). The server announces it: gRPC clients
	// refuse to send more ("header list size to send violates the maximum
	// size (65536 bytes) set by server"), and a call that sends more is
	// reset before its metadata is kept.
	MaxHeaderBytes int
	// MaxConcurrentStreams bounds the DoGet and DoPut streams served at
	// once, over all connections (0: DefaultMaxConcurrentStreams); more are
	// refused with ResourceExhausted.
	MaxConcurrentStreams int
	// QueryTimeout bounds a SQL statement from planning to the end of its
	// result stream (0: DefaultQueryTimeout; negative: none).
	QueryTimeout time.Duration
	// QueryMemoryBytes bounds the memory one SQL query allocates (its own
	// buffers, not the snapshots it reads): Arrow buffers and the Go-heap
	// structures of its operators (hash tables, accumulators, sort
	// permutations). Over it the query fails with ResourceExhausted naming
	// the limit and the operator, and releases everything. 0 means no
	// bound.
	QueryMemoryBytes int64
	// ServerMemoryBytes bounds the memory of the whole process (the
	// command's --memory-limit): queries together may hold at most this
	// much, and while the heap (tables, state, ingested rows included) is
	// at or past it, new queries and ingest are refused with
	// ResourceExhausted. 0 means no bound.
	ServerMemoryBytes int64
	// ReturnMemoryBytes: once queries have freed this many bytes, or a
	// table is dropped, the server trims its allocator's pool of free
	// buffers and returns free memory to the OS (debug.FreeOSMemory), off
	// the request path and at most once a second, so that the resident
	// set comes back down after a large query (0:
	// DefaultReturnMemoryBytes; negative: never).
	ReturnMemoryBytes int64
	// MaxPreparedStatements bounds open prepared statements (0: default).
	MaxPreparedStatements int
	// MaxPreparedStatementsPerUser bounds one user's open prepared
	// statements and MaxPreparedBytesPerUser the bytes of their SQL text
	// (0: the defaults). Over either, CreatePreparedStatement fails with
	// ResourceExhausted naming it.
	MaxPreparedStatementsPerUser int
	MaxPreparedBytesPerUser      int64
	// PreparedStatementIdle closes prepared statements idle this long (0:
	// default).
	PreparedStatementIdle time.Duration
	// BatchBytes is the target size of outgoing record batches (0: a
	// quarter of MaxMessageBytes, at most 3 MiB, which also stays under
	// the 4 MiB default of plain gRPC clients). Memory-sink tables keep
	// 64K-row records (≈ 2 MiB for a few numeric columns), the fastest size
	// to stream; only larger records are sliced.
	BatchBytes int64

	// MaxStatementBytes is the longest SQL statement accepted (0:
	// DefaultMaxStatementBytes). It is checked before planning, and again
	// when a ticket is redeemed, so a statement that runs always has a
	// ticket DoGet accepts.
	MaxStatementBytes int
	// StallTimeout cancels a DoGet stream whose client has read nothing
	// for this long: its records and snapshots are released and its
	// connection closed (0: DefaultStallTimeout; negative: never).
	StallTimeout time.Duration

	// Quotas (0: no bound). Over a quota a request fails with
	// ResourceExhausted naming it.
	// MaxConcurrentQueries bounds the SQL statements planned or streamed
	// at once; MaxConcurrentQueriesPerUser the same per user.
	MaxConcurrentQueries        int
	MaxConcurrentQueriesPerUser int
	// MaxStreamingTables bounds the active streaming tables;
	// MaxStreamingTablesPerUser the ones a user created through this
	// server. CREATE STREAMING TABLE over a bound is refused.
	MaxStreamingTables        int
	MaxStreamingTablesPerUser int
	// MaxStateBytes and MaxCheckpointBytes (and their per-user forms)
	// refuse new streaming tables while the active ones hold this much
	// state (memoryUsedBytes of their latest progress) or checkpoint data.
	// Running tables are measured every second too (when Queries is a
	// QueryFailer, as ManagerQueries is): once their sum goes past a limit,
	// the table in scope that grew most is stopped, FAILED with a
	// RESOURCE_EXHAUSTED error naming the limit (one table per second
	// until the sum is back under).
	MaxStateBytes             int64
	MaxStateBytesPerUser      int64
	MaxCheckpointBytes        int64
	MaxCheckpointBytesPerUser int64
}

// AuthConfig enables basic-auth login with bearer tokens.
type AuthConfig struct {
	// Users maps user names to passwords or password hashes (see
	// HashPassword). Entries of UsersFile are added to these.
	Users map[string]string
	// UsersFile names a file of "user:password" or "user:<hash>" lines,
	// and "grant user=table[,table...]" lines that add to ReadGrants (a
	// file with grant lines makes grants apply, as ReadGrants does).
	UsersFile string
	// TokenTTL is the lifetime of issued tokens (0: DefaultTokenTTL).
	TokenTTL time.Duration
	// ReadGrants, when not nil, limits what each user may read: the
	// tables listed for the user (case-insensitive; system tables as
	// "system.<name>"; "*" grants every table). Users without an entry
	// read nothing. A table a user may not read is hidden: reads,
	// GetFlightInfo, GetSchema and SQL answer NotFound as for a missing
	// table, and ListFlights and GetTables leave it out. Users whose grant
	// is not "*" cannot run commands (DDL) or ingest (PermissionDenied).
	// nil: every authenticated user reads every table.
	ReadGrants map[string][]string
}

func (a AuthConfig) enabled() bool { return len(a.Users) > 0 || a.UsersFile != "" }

// TLSConfig enables TLS.
type TLSConfig struct {
	// CertFile and KeyFile are the server's PEM certificate chain and key.
	CertFile, KeyFile string
	// ClientCAFile, when set, requires clients to present a certificate
	// signed by one of these CAs (mutual TLS).
	ClientCAFile string
}

func (t TLSConfig) enabled() bool { return t.CertFile != "" || t.KeyFile != "" }

// Config configures a Server.
type Config struct {
	// Addr is the listen address, host:port (port 0 picks one).
	Addr string
	// Auth enables authentication; the zero value disables it.
	Auth AuthConfig
	// Authenticator, when set, replaces Auth: the server checks the users,
	// tokens and read grants of this shared Authenticator (so that the
	// same login works on the process's other ports).
	Authenticator *Authenticator
	// TLS enables TLS; the zero value disables it.
	TLS TLSConfig
	// AllowInsecure lets the server listen on a non-loopback address
	// without authentication or TLS. Without it such a server refuses to
	// start.
	AllowInsecure bool
	// Limits; the zero value means the defaults.
	Limits Limits
	// IPCCompression compresses the bodies of outgoing record batches:
	// "" (none, the default: fastest on a local network), "lz4" (cheap,
	// recommended for remote clients) or "zstd" (smaller, slower). Clients
	// must support the codec (Arrow C++, Go, Java and pyarrow do).
	IPCCompression string
	// Catalog is the Flight SQL catalog name (default DefaultCatalog).
	Catalog string

	// Sinks lists the memory-sink tables served (by plain Flight and in
	// the catalog). Required.
	Sinks *memsink.Catalog
	// Engine runs SQL; nil answers Flight SQL statements with
	// Unimplemented.
	Engine QueryEngine
	// Tables lists static and source tables for the catalog calls.
	Tables TableLister
	// SystemTables are listed in SystemSchema.
	SystemTables []SystemTable
	// Cluster, in cluster mode, locates the instances holding a cluster
	// table's rows: its FlightInfo then has one endpoint per instance
	// (cluster.go). Nil: every FlightInfo has one endpoint.
	Cluster ClusterLocator
	// Queries lists the streaming queries, for the streaming-table quotas
	// (nil: those quotas are not enforced).
	Queries QueryLister
	// Ingest receives DoPut batches; nil answers DoPut with Unimplemented.
	Ingest IngestTargets

	// UnaryInterceptors and StreamInterceptors run first on every call
	// (metrics, tracing).
	UnaryInterceptors  []grpc.UnaryServerInterceptor
	StreamInterceptors []grpc.StreamServerInterceptor

	// Allocator is used for the server's own buffers and is the parent of
	// every query's accounting allocator (nil: vector.NewDefaultAllocator,
	// as a session's).
	Allocator memory.Allocator
	// Logger receives the server's logs (nil: slog.Default()).
	Logger *slog.Logger
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	l := &c.Limits
	if l.ReturnMemoryBytes == 0 {
		l.ReturnMemoryBytes = DefaultReturnMemoryBytes
	}
	if l.MaxMessageBytes <= 0 {
		l.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if l.MaxConcurrentStreams <= 0 {
		l.MaxConcurrentStreams = DefaultMaxConcurrentStreams
	}
	if l.QueryTimeout == 0 {
		l.QueryTimeout = DefaultQueryTimeout
	}
	if l.MaxPreparedStatements <= 0 {
		l.MaxPreparedStatements = DefaultMaxPreparedStatements
	}
	if l.MaxPreparedStatementsPerUser <= 0 {
		l.MaxPreparedStatementsPerUser = DefaultMaxPreparedStatementsPerUser
	}
	if l.MaxPreparedBytesPerUser <= 0 {
		l.MaxPreparedBytesPerUser = DefaultMaxPreparedBytesPerUser
	}
	if l.PreparedStatementIdle <= 0 {
		l.PreparedStatementIdle = DefaultPreparedStatementIdle
	}
	if l.MaxStatementBytes <= 0 {
		l.MaxStatementBytes = DefaultMaxStatementBytes
	}
	if l.StallTimeout == 0 {
		l.StallTimeout = DefaultStallTimeout
	}
	if l.BatchBytes <= 0 {
		l.BatchBytes = min(int64(l.MaxMessageBytes)/4, 3<<20)
	}
	// Leave room for the IPC metadata and padding of a message.
	l.BatchBytes = min(l.BatchBytes, int64(l.MaxMessageBytes)/2)
	if c.Auth.TokenTTL <= 0 {
		c.Auth.TokenTTL = DefaultTokenTTL
	}
	if c.Catalog == "" {
		c.Catalog = DefaultCatalog
	}
	if c.Allocator == nil {
		c.Allocator = vector.NewDefaultAllocator()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

func (c Config) validate() error {
	var errs []error
	if c.Addr == "" {
		errs = append(errs, errors.New("no listen address (Addr)"))
	}
	if c.Sinks == nil {
		errs = append(errs, errors.New("no sink catalog (Sinks)"))
	}
	switch c.IPCCompression {
	case "", "lz4", "zstd":
	default:
		errs = append(errs, fmt.Errorf("unknown IPC compression %q (want lz4 or zstd)", c.IPCCompression))
	}
	if c.TLS.enabled() && (c.TLS.CertFile == "" || c.TLS.KeyFile == "") {
		errs = append(errs, fmt.Errorf("TLS needs both a certificate and a key (got cert %q, key %q)", c.TLS.CertFile, c.TLS.KeyFile))
	}
	if c.TLS.ClientCAFile != "" && !c.TLS.enabled() {
		errs = append(errs, errors.New("client certificates (ClientCAFile) need TLS (CertFile, KeyFile)"))
	}
	if err := validateGrants(c.Auth); err != nil {
		errs = append(errs, err)
	}
	if c.Limits.QueryMemoryBytes < 0 {
		errs = append(errs, fmt.Errorf("negative QueryMemoryBytes %d", c.Limits.QueryMemoryBytes))
	}
	return errors.Join(errs...)
}

// ErrInsecure is returned by Start for a non-loopback listen address
// without both authentication and TLS, unless Config.AllowInsecure is set.
var ErrInsecure = errors.New("refusing to serve a non-loopback address without authentication and TLS")

// checkExposure refuses an address reachable from other hosts unless the
// server authenticates and encrypts, or the operator allowed it.
func (c Config) checkExposure(ctx context.Context) error {
	if c.AllowInsecure || ((c.Auth.enabled() || c.Authenticator != nil) && c.TLS.enabled()) {
		return nil
	}
	loop, err := isLoopback(ctx, c.Addr)
	if err != nil {
		return fmt.Errorf("server: address %q: %w", c.Addr, err)
	}
	if loop {
		return nil
	}
	var missing []string
	if !c.Auth.enabled() && c.Authenticator == nil {
		missing = append(missing, "authentication (users)")
	}
	if !c.TLS.enabled() {
		missing = append(missing, "TLS (certificate and key)")
	}
	return fmt.Errorf("server: address %q: %w: configure %s, listen on 127.0.0.1, or set AllowInsecure (--allow-insecure)",
		c.Addr, ErrInsecure, strings.Join(missing, " and "))
}

// isLoopback reports whether every address host resolves to is loopback.
// An empty or unspecified host (all interfaces) is not.
func isLoopback(ctx context.Context, addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, err
	}
	if host == "" {
		return false, nil
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback(), nil
	}
	if strings.EqualFold(host, "localhost") {
		return true, nil
	}
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return false, err
	}
	for _, ip := range ips {
		if !ip.IP.IsLoopback() {
			return false, nil
		}
	}
	return len(ips) > 0, nil
}
