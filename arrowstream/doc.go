// Package arrowstream is Arrowstream's public streaming API and engine:
// sources and sinks, the DataFrame builder, streaming queries and their
// manager, triggers and output modes, the micro-batch loop with its
// exactly-once recovery rule, watermark tracking, stateful streaming
// operators (which compose vector operators with checkpoint state), and
// progress reporting. It follows Spark Structured Streaming's micro-batch
// semantics (SEMANTICS.md).
//
// Exactly-once rests on two contracts: a Source returns the same data for
// the same offset range every time (replayable), and a Sink ignores an
// epoch it has already committed (idempotent). The engine writes an epoch's
// offsets before running it and its commit after the sink and state have
// committed, so a restarted query either moves on or re-runs the last epoch
// with exactly the offsets it logged.
package arrowstream
