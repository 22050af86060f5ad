package server

import (
	"context"
	"errors"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// Errors a QueryEngine, TableLister or IngestTarget wraps (with %w) to
// choose the status a client sees. Any other engine error is reported as
// InvalidArgument (the statement was at fault) with the error's message.
var (
	// ErrNotFound: a table, column or prepared statement does not exist
	// (NotFound).
	ErrNotFound = errors.New("not found")
	// ErrAlreadyExists: CREATE of a name that is taken (AlreadyExists).
	ErrAlreadyExists = errors.New("already exists")
	// ErrUnsupported: valid but not supported here (Unimplemented).
	ErrUnsupported = errors.New("not supported")
	// ErrPermissionDenied: the user may not do this (PermissionDenied).
	ErrPermissionDenied = errors.New("permission denied")
)

// Request is one SQL statement to plan or run.
type Request struct {
	// SQL is the statement text.
	SQL string
	// Params holds one row of parameter values for the statement's
	// placeholders, or is nil. It is borrowed for the duration of the call
	// (an OpenFunc that needs it later retains it).
	Params arrow.Record
	// User is the authenticated user ("" without authentication).
	User string
	// CanRead, when not nil, says which tables the user may read (see
	// AuthConfig.ReadGrants). The engine must treat every other table as
	// if it did not exist (wrap ErrNotFound), also in EXPLAIN and in
	// commands that list or describe tables.
	CanRead func(table string) bool
	// Mem is the allocator the query must allocate through: it counts
	// against the per-query memory limit and panics with a
	// *MemoryLimitError when the limit is exceeded (see MemoryLimitError).
	Mem memory.Allocator
	// Settings are the SET values of the client's session (its
	// connection), or nil outside a server session. The engine analyzes
	// with them and stores the session's SETs in them, so that a SET
	// affects that session only.
	Settings *Settings
	// Overlay, when not nil, resolves table names before the engine's
	// catalog: a front end's own relations (the PostgreSQL endpoint's
	// pg_catalog and information_schema), built from the tables the user
	// may see. CanRead is not applied to them.
	Overlay plan.Catalog
}

// Statement describes a statement without running it.
type Statement struct {
	// IsQuery is true for statements that return rows (SELECT, SHOW,
	// DESCRIBE, EXPLAIN, ...) and false for commands (CREATE, DROP, ...),
	// which Exec runs.
	IsQuery bool
	// Schema is the result schema of a query. It must equal (names, types,
	// nullability, field metadata) the schema Query returns, because Flight
	// SQL clients check the stream against it. It may be nil only when it
	// depends on parameter values; the server then plans with the bound
	// parameters to learn it.
	Schema *arrow.Schema
	// ParameterSchema has one field per placeholder, nil when the statement
	// has none.
	ParameterSchema *arrow.Schema
}

// OpenFunc starts running a planned query. It takes the snapshots of the
// tables the query reads when it is called, not when the query is planned,
// so a plan that is never opened holds nothing. The returned operator owns
// its snapshots and releases them on Close; the server always closes it,
// also when the client goes away mid-stream. The operator must honour ctx
// cancellation in Next.
type OpenFunc func(ctx context.Context) (vector.Operator, error)

// QueryEngine runs SQL for the server: the planner over snapshots of sink
// tables, static tables and system tables, and the DDL of streaming
// tables. It must be safe for concurrent use: every Flight call runs on its
// own goroutine.
//
// Errors name the input (the table, column or clause at fault); wrap
// ErrNotFound, ErrAlreadyExists, ErrUnsupported or ErrPermissionDenied to
// pick the status code, or return a gRPC status error to pick it exactly.
type QueryEngine interface {
	// Prepare parses and analyzes req.SQL (req.Params is nil) without
	// running it or taking snapshots.
	Prepare(ctx context.Context, req Request) (Statement, error)
	// Query plans a query for req.Params and returns its result schema and
	// the function that opens the result stream.
	Query(ctx context.Context, req Request) (*arrow.Schema, OpenFunc, error)
	// Exec runs a command (CREATE TABLE ... USING, CREATE STREAMING TABLE,
	// DROP TABLE, ...) and returns the affected row count (0 for DDL).
	Exec(ctx context.Context, req Request) (int64, error)
}

// Table types reported by GetTables and GetTableTypes.
const (
	// TableTypeStreaming is a memory-sink table written by a streaming
	// query.
	TableTypeStreaming = "STREAMING TABLE"
	// TableTypeTable is a static or source table (CREATE TABLE ... USING).
	TableTypeTable = "TABLE"
	// TableTypeSystem is a system table (system.streaming_queries).
	TableTypeSystem = "SYSTEM TABLE"
)

// Database schemas (Flight SQL "db_schema_name") the server reports.
const (
	// DefaultSchema holds sink, static and source tables.
	DefaultSchema = "default"
	// SystemSchema holds the system tables.
	SystemSchema = "system"
)

// TableInfo describes a table for the catalog calls (GetTables).
type TableInfo struct {
	// DBSchema is the database schema: DefaultSchema or SystemSchema.
	DBSchema string
	// Name is the table name as declared.
	Name string
	// Type is one of the TableType constants.
	Type string
	// Schema is the table's Arrow schema.
	Schema *arrow.Schema
}

// TableLister lists tables other than memory-sink tables (which the server
// reads from its memsink.Catalog) and system tables (Config.SystemTables):
// the static and source tables declared with CREATE TABLE ... USING. It
// must be safe for concurrent use.
type TableLister interface {
	ListTables(ctx context.Context) ([]TableInfo, error)
}

// SystemTable is a read-only table computed when read, such as
// system.streaming_queries. Implementations are safe for concurrent use.
type SystemTable interface {
	// Name is the table's name inside SystemSchema ("streaming_queries").
	Name() string
	// Schema is the schema of Records.
	Schema() *arrow.Schema
	// Records computes the table's current rows, owned by the caller.
	Records(ctx context.Context, mem memory.Allocator) ([]arrow.Record, error)
}

// IngestTarget receives record batches pushed by clients with DoPut (a
// memory or flight source table). It must be safe for concurrent use.
type IngestTarget interface {
	// Schema is the schema pushed batches must have: the same column names
	// and types, in order (nullability is not checked).
	Schema() *arrow.Schema
	// Append adds rec's rows as one unit. rec is borrowed: a target that
	// keeps it retains it. The server has already checked the schema.
	Append(ctx context.Context, rec arrow.Record) error
}

// IngestTargets finds the table a DoPut names. Lookup is case-insensitive
// by convention and must be safe for concurrent use; it returns false for
// a name that is not an ingest target.
type IngestTargets interface {
	LookupIngest(name string) (IngestTarget, bool)
}
