// Package pebblestore is the "pebble" state store provider: state that
// outgrows memory lives in one Pebble instance per state partition, in a
// local working directory, and each committed version is made durable by
// copying Pebble's immutable SST files into the checkpoint plus a small
// per-version manifest (the scheme of Spark's RocksDB state store).
//
// Checkpoint layout of a partition (<checkpoint>/state/<op>/<partition>):
//
//	sst/<file number>-<random>.sst   immutable SST files, shared by versions
//	<version>.pebble                 manifest of a version: the SST files it
//	                                 needs (local name, checkpoint name,
//	                                 size), its key count and Pebble's own
//	                                 small files (MANIFEST, OPTIONS, markers)
//	<version>.changelog              with changelog checkpointing, before
//	                                 group commit: a version's changes
//	                                 (zstd Pebble batch); under group
//	                                 commit they are in the state log
//	                                 (<checkpoint>/state/_log, group.go)
//	_local/                          the working Pebble directory (default;
//	                                 see Options.LocalDir), rebuilt on start
//
// Epoch N reads version N and commits N+1: the epoch's updates are kept in
// an indexed batch (visible to its reads), and Commit applies the batch,
// flushes the memtable, takes a Pebble checkpoint (hard links) and copies
// the SST files the checkpoint directory does not have yet (hard links when
// the file system allows, else copies, fsynced), then writes the version
// manifest atomically. SST files get a random suffix because Pebble reuses
// file numbers after a restore of an older version. Restoring a version
// (on start, or when the loaded version is not the one asked for) rebuilds
// the working directory from the files its manifest names. Manifests older
// than the retained versions are deleted, then every SST file no retained
// manifest names.
//
// With changelog checkpointing (Options.ChangelogCheckpointing) only every
// MinDeltasForSnapshot-th version is made that way; the others write
// <version>.changelog, the epoch's Pebble batch compressed with zstd, and a
// restore replays the changelogs after the newest snapshot (changelog.go).
//
// Under group commit (the engine opens the provider's state log: see
// checkpoint.GroupCommitter and group.go), a partition whose epoch changed
// nothing writes nothing, changelogs of all partitions go into one state
// log record per epoch, and only a snapshot version that finds changes
// copies SST files and writes its manifest.
//
// The package is separate from checkpoint so that checkpoint keeps the
// dependencies docs/design.md §1 gives it (arrow, compress); arrowstream imports
// both.
package pebblestore
