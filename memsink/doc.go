// Package memsink is Arrowstream's memory sink: every committed epoch of a
// streaming query becomes part of an in-memory Arrow table that readers
// (Flight and Flight SQL clients, through the server package) query while
// the stream runs.
//
// # Semantics
//
// A [Table] implements [arrowstream.Sink] with Spark's MemorySink rules
// (docs/semantics.md §1): an epoch id at or below the latest committed one is
// ignored (idempotent replay), Complete mode replaces the whole contents
// with each epoch's rows, Append and Update mode ("update as append") add
// them, and empty epochs are recorded too. Rows reach the table only once
// AddBatch has consumed the whole operator; an error leaves the table as it
// was. With Options.UpdateAsView an Update-mode table is instead a
// materialized view that keeps the latest row per key.
//
// # Concurrency and ownership
//
// Writers (AddBatch, Clear, Close) are serialized by a mutex that readers
// never take. Each commit builds an immutable version of the table (the
// retained epochs and their records) and publishes it with an atomic
// pointer swap. A [Snapshot] holds one reference to a version, and through
// it to every record it lists; taking one costs a pointer load and an
// atomic increment, whatever the table's size, and a reader never sees
// half an epoch. Records are kept as the operator returned them (retained,
// not copied); records longer than [MaxRecordRows] are split by slicing
// (zero-copy) so that readers stream bounded batches. Retention limits
// evict the oldest epochs from new versions; an evicted record is released
// when the last snapshot that lists it is released.
//
// # Compaction
//
// Small epochs cost more in bookkeeping (record, array and buffer
// structs) than in Arrow bytes. In Append and Update tables a background
// compaction (after Options.CompactAfter small epochs, or [Table.Compact])
// copies the records of consecutive small epochs into one record of up to
// MaxRecordRows rows from the table's allocator, a run that keeps each
// epoch as a row range: AsOf, Since, History and RecordsWithEpoch see the
// same epochs as before, and a record spanning several epochs has Part
// epoch -1. Background merges are tiered: a run is merged again only
// with at least as many rows after it, so a row is copied a logarithmic
// number of times on its way into a full record (and a few runs of
// halving size wait to fill); [Table.Compact] merges everything it can.
// The run replaces its epochs in a new version; snapshots of
// older versions keep the records they list. Retention evicting part of a
// run slices it, so the evicted rows' buffers stay held until the run is
// recopied (at the next commit once it is half evicted). [Size] reports
// the bookkeeping as Overhead, and MaxBytes counts it.
//
// Records obtained from a Snapshot are borrowed: they stay valid until the
// Snapshot is released, and a reader that needs them longer (a Flight
// stream) Retains them.
//
// # Time travel
//
// A table retains a window of epochs (Options.MaxEpochs, MaxRows,
// MaxBytes): [Table.AsOf] reads the table as of any retained epoch,
// [Table.Since] returns the rows committed after an epoch (incremental
// polling), [Table.History] lists the retained epochs, and
// [Snapshot.RecordsWithEpoch] appends `_epoch` and `_commit_timestamp`
// columns. [Table.Subscribe] follows a table: a [Subscription] operator
// whose Next returns each epoch's rows as the epoch commits (SQL's
// SUBSCRIBE, served by the Flight SQL server).
//
// # Durability
//
// With Options.Persist every epoch's rows are appended durably, before they
// become visible, as LZ4-compressed Arrow IPC (earlier builds wrote zstd
// for large epochs; still read) framed with a CRC-32C to a log of segment
// files under
// <checkpoint>/sinks/memory/<n>.seg (one pwrite and one fdatasync per
// epoch; earlier builds wrote <epoch>.arrow files, still read), and [New]
// rebuilds the table from them, so a restarted process serves the same
// table. Records form a chain (each names its predecessor and the first
// one needed), so a missing or damaged record is reported by file (and
// offset), never skipped; a torn tail a crash left is cut back. Without
// persistence, [CanRecover] applies Spark's rule that only Complete-mode
// queries may restart from an existing checkpoint.
//
// A [Catalog] maps case-insensitive query names to tables.
package memsink
