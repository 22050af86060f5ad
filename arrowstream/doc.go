// Package arrowstream is Arrowstream's public streaming API: the Session
// (and its SQL front end), the DataFrame builder, DataStreamReader and
// DataStreamWriter, streaming queries and their manager, triggers and
// clocks, and the registries of source, sink and state store provider
// formats. It follows Spark Structured Streaming's micro-batch semantics
// (docs/semantics.md).
//
// The package is the top of a small stack (docs/architecture.md):
//
//   - arrowstream/stream holds the contracts (Source, Sink and their
//     capabilities, SinkInfo, OutputMode, EpochInfo, progress types,
//     GroupState); this package re-exports them as aliases.
//   - arrowstream/internal/engine runs queries: the micro-batch and
//     continuous loops, the exactly-once recovery rule, watermark
//     tracking, progress reports.
//   - arrowstream/internal/stateful holds the stateful operators
//     (aggregation, session windows, deduplication, stream-stream joins,
//     limit, flatMapGroupsWithState) and their state partitions.
//   - arrowstream/source/... and arrowstream/sink/... are the built-in
//     connectors; they import only the contracts.
//
// Exactly-once rests on two contracts: a Source returns the same data for
// the same offset range every time (replayable), and a Sink ignores an
// epoch it has already committed (idempotent). The engine writes an epoch's
// offsets before running it and its commit after the sink and state have
// committed, so a restarted query either moves on or re-runs the last epoch
// with exactly the offsets it logged.
//
// The package links no larger-than-memory state store: the "memory"
// provider is built in, and a program registers others on its session
// (pebblestate.Register for "pebble").
package arrowstream
