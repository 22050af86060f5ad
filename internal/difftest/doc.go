// Package difftest finds wrong answers nobody wrote a test for: it
// generates random tables (nulls, extreme values, NaN, ±Inf, -0.0, empty
// and long strings, dictionary-encoded columns, every column type the
// engine reads) and random queries over them in the engine's dialect, and
// checks each query with oracles that need no expected answer:
//
//   - optimizer: the analyzed plan and the optimized plan give the same
//     rows (Optimize must not change what a query computes);
//   - TLP (ternary logic partitioning): for a random predicate p, the rows
//     of q equal the union of q WHERE p, q WHERE NOT p and q WHERE p IS
//     NULL; for HAVING the same with the predicate conjoined to HAVING;
//     for aggregates, MIN/MAX/COUNT/SUM of q equal the MIN/MAX/SUM/SUM of
//     the partitions' aggregates;
//   - leaks: every query's operators return all their memory to a checked
//     allocator.
//
// A third oracle, DuckDB on the subset of the dialect where Spark and
// DuckDB agree, lives in the separate module bench/peers/duckdb (it needs
// cgo); it uses this package's generator with Options.DuckDB set, which
// keeps to that subset, and its SQL rendering for DuckDB.
//
// A mismatch is reported with a reproducer: the tables as CREATE TABLE and
// INSERT statements and in the sqllogic format of plan/testdata/sqllogic,
// the query or queries, and both answers. Reduce shrinks a failing case
// (fewer rows, fewer select items, simpler expressions) before it is
// printed.
//
// Entry points: Run (a time- or count-bounded loop, used by
// `arrowstream difftest`), Check (one seed, used by FuzzDifferential) and
// Generate (a case, for other oracles).
//
// What is generated, the Spark/DuckDB subset and what was found are in
// docs/difftest.md.
package difftest
