// Package stream holds the contracts every part of Arrowstream shares:
// Source and its optional capabilities, Sink and every sink capability,
// SinkInfo, OutputMode, EpochInfo, the progress report types, and the
// GroupState handle of FlatMapGroupsWithState.
//
// It imports only vector and Arrow, so that connectors, sinks (memsink)
// and the server implement the contracts without linking the engine. The
// arrowstream package re-exports these names as type aliases.
//
// Exactly-once rests on two contracts: a Source returns the same data for
// the same offset range every time (replayable), and a Sink ignores an
// epoch it has already committed (idempotent). See docs/semantics.md §2.
package stream
