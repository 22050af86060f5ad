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
// The trade-off is CPU: near the limit the collector runs more often.
// When what is live (an epoch's working memory: hash tables, changelogs,
// gathered batches; a query's own structures; memory the held bytes do
// not count) is itself over Base + Ratio·H, a limit there would make the
// runtime collect back to back, up to its cap of about half the CPU (a
// first version did: 4× the CPU of a paced 20-row-epoch table). The
// limit is therefore never set under the live memory plus a slack (1/8
// of the live heap, at least 4 MiB): the collector then runs at most once
// per slack allocated, and the ratio is met only where what is live
// allows it. Floor bounds the limit from below (a process holding almost
// nothing still needs room to work) and Ceiling from above (the server's
// --memory-limit). The limit is process-wide: one Target per
// process, started by the program (the bench, a server), never by a
// library on its own.
package memtarget
