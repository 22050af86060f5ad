// Package memtarget keeps the Go runtime's soft memory limit
// (debug.SetMemoryLimit) in proportion to the bytes the engine holds: its
// streaming state plus what its memory-sink tables retain.
//
// Why: with the default GOGC=100 the collector lets the heap grow to
// twice what was live after the last collection, and a table or a
// query's state is live data, so a process holding H bytes in the Go heap
// is resident at about 2·H plus its working memory. A limit of
// Base + Ratio·H (Base: the runtime's own memory when nothing is held)
// makes the collector run before the heap passes it, so that the resident
// set tracks the held bytes instead of the collector's slack.
//
// The trade-off is CPU: near the limit the collector runs more often, and
// when an epoch's working memory (hash tables, changelogs, gathered
// batches) is itself larger than Ratio·H the heap cannot stay under the
// limit and the runtime collects continuously, up to its cap of about
// half the CPU. Floor bounds the limit from below (a process holding
// almost nothing still needs room to work) and Ceiling from above (the
// server's --memory-limit). The limit is process-wide: one Target per
// process, started by the program (the bench, a server), never by a
// library on its own.
package memtarget
