// Package pgwire serves Arrowstream's tables over the PostgreSQL wire
// protocol (version 3.0), so that psql, psycopg/pandas, pgx, JDBC and the
// other Postgres drivers read them. It is a second front end to the Flight
// SQL server's session engine (server.Frontend): the same planner over the
// same snapshots, the same users, read grants, quotas, statement and
// memory limits and query timeout.
//
// # Protocol
//
// Messages are encoded and decoded by github.com/jackc/pgx/v5/pgproto3;
// the session logic is this package's. A connection may start with an
// SSLRequest (TLS with the Flight server's certificate) and then logs in
// with SCRAM-SHA-256, or with a cleartext password when the connection is
// encrypted (Config.PasswordAuth). Simple queries may hold several
// statements; the extended protocol has named and unnamed statements and
// portals, row limits on Execute, and $1-style parameters: the values
// are decoded into a one-row Arrow batch that the dialect binds to its
// placeholders as literal nodes (params.go, params_bind.go), never as
// text. Statements are translated from PostgreSQL's syntax into the
// dialect first (pgdialect.go, pgfuncs.go): quoted identifiers, regex
// operators, COLLATE, pg_catalog functions. pg_catalog and
// information_schema are tables of the planner, computed per statement
// from the tables the user may see (pgcatalog*.go); queries over the
// catalog relations that never have rows answer with none (pgempty.go).
// SUBSCRIBE streams committed epochs over the simple protocol
// (subscribe.go); statement_timeout bounds statements (timeout.go).
// Results are encoded column by column
// from the Arrow record batches in the text or binary format the client
// asks for (encode*.go), and written as they are pulled from the query, so
// a slow client holds back the query rather than making the server buffer
// its result. A CancelRequest carrying a backend's key cancels its running
// statement (57014). Errors carry SQLSTATE codes mapped from the engine's
// error classes (errors.go).
//
// # Security
//
// On an address that is not loopback the server refuses to start without
// authentication and TLS (unless Config.AllowInsecure), and refuses
// connections that do not ask for TLS. Messages are bounded
// (Config.MaxMessageBytes), as are the connections (MaxConnections, and
// one user's, counted after login, MaxConnectionsPerUser) and the time a
// login may take (LoginTimeout).
package pgwire
