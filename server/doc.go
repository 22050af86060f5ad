// Package server is Arrowstream's Arrow Flight and Flight SQL service: the
// committed epochs of every streaming table, read at any moment and
// consistently by Flight clients and by notebooks and JDBC tools through
// Flight SQL (ADBC, the Arrow Flight SQL JDBC driver).
//
// # Plain Flight
//
// ListFlights lists one flight per memory-sink table (memsink.Catalog);
// GetFlightInfo and GetSchema describe a table's current snapshot (schema,
// rows, bytes) for a PATH descriptor [table] or a CMD descriptor holding a
// JSON ticket; DoGet streams the records a Ticket names: the current
// snapshot, the table as of an epoch, or the rows committed since an epoch
// (incremental polling). Records are sent as the snapshot holds them,
// retained and never copied. DoPut with a PATH descriptor appends batches
// to an IngestTarget, checking the schema first. Every DoPut message is
// checked before arrow-go's IPC reader sees it (ipccheck.go, ipclayout.go:
// the reader trusts the sizes a header claims), and every pushed batch
// before it is kept (validate.go).
//
// # Flight SQL
//
// arrow-go's flightsql router serves the protocol; statements go to a
// QueryEngine (the planner, supplied by the caller): CommandStatementQuery,
// prepared statements with parameter binding, CommandStatementUpdate for
// DDL, bulk ingest. Catalog calls (GetCatalogs, GetDbSchemas, GetTables
// with include_schema, GetTableTypes, GetPrimaryKeys and the other key
// calls, GetSqlInfo) answer with exactly the specification's result
// schemas. Tables live in catalog Config.Catalog, schemas DefaultSchema
// (sink, static and source tables) and SystemSchema (system tables, see
// SystemTables). Anything else answers Unimplemented.
//
// # Streams, snapshots and cancellation
//
// Every result is produced on the call's own goroutine: a loop pulls a
// vector.Operator and writes record batches to the gRPC stream. A reader
// holds a memsink.Snapshot (whole epochs only) for the duration of its
// stream and never blocks commits. When a client goes away the blocked
// Send returns, the loop ends and the operator is closed, releasing every
// record: no goroutine or Arrow buffer is left behind. Records larger than
// Limits.BatchBytes are sent as zero-copy slices, so that messages stay
// under the clients' 16 MiB default.
//
// SUBSCRIBE t [SINCE EPOCH n] (subscribe.go) is the one result that does
// not end: its DoGet streams each epoch of a memory-sink table as it
// commits, on the same loop, until the client cancels, the table is
// dropped or the server stops (Stop ends subscriptions instead of waiting
// for them). A slow subscriber blocks only its own stream; one that falls
// behind the table's retention is ended with ResourceExhausted.
//
// # Security and limits
//
// With AuthConfig, Handshake exchanges HTTP basic credentials for a bearer
// token and every other call needs "authorization: Bearer <token>"
// (Unauthenticated otherwise). TLSConfig enables TLS and, with a client CA,
// mutual TLS. A server on a non-loopback address without both refuses to
// start unless Config.AllowInsecure is set. Limits bound message size,
// concurrent streams, query time and per-query memory; a query that
// exceeds one fails with ResourceExhausted or DeadlineExceeded and the
// server stays up. Error codes are limited to those the ADBC driver
// passes through (InvalidArgument, NotFound, AlreadyExists,
// PermissionDenied, Unauthenticated, ResourceExhausted, DeadlineExceeded,
// Unimplemented, Internal).
package server
