// Package checkpoint owns Arrowstream's durable query state: the metadata
// file, the offset log (write-ahead: which data each epoch reads) and the
// commit log (which epochs are done), the state store, and the atomic,
// durable file writes that all of them rely on.
//
// Layout follows Spark Structured Streaming (see docs/semantics.md §9):
//
//	<checkpoint>/metadata          {"id":"<query uuid>"}
//	<checkpoint>/epochlog/<F>.seg  v2: offsets and commit records, appended (segment.go)
//	<checkpoint>/offsets/<N>       v1, epoch metadata JSON, one offset line per source
//	<checkpoint>/commits/<N>       v1, {"nextBatchWatermarkMs":...}
//	<checkpoint>/state/_log/<F>.seg  the state log: per version, every changed partition's delta (statelog.go)
//	<checkpoint>/state/<op>/<partition>/<version>.snapshot, <version>.<base>.segment (statestore_segment.go) (and .delta before the state log)
//
// A checkpoint's offset and commit logs are either v1 (Spark's one file per
// epoch, kept for checkpoints created in it) or v2 (the epoch log: one
// append and one fdatasync per epoch); epochlog.go has the format choice
// and the durability argument for writing an epoch's commit record with
// the next epoch's offsets.
//
// Every other file is written to a temporary file in the same directory,
// fsynced, renamed into place without overwriting and the directory
// fsynced, so that readers never see a partial file and a crash at any
// moment leaves either the old state or the new one. Log files
// additionally end with a checksum line (v2 records carry a checksum
// each), so that a damaged file is reported with its name instead of
// being read as a wrong answer.
//
// An operator that keeps its state live logs only each epoch's changes
// (ChangelogWriter); snapshots of such a partition are made in the
// background, as segments of the changes (statestore_segment.go) or,
// when a full snapshot is due, from an immutable view of the operator's
// state handed at the epoch boundary (LiveSnapshotter, LiveView:
// statestore_live.go) instead of a fold of the logs. Every snapshot is an
// ordinary state file: recovery is the newest snapshot plus the deltas
// after it, whichever way it was made.
//
// Offsets are opaque bytes here: sources define their own encoding.
package checkpoint
