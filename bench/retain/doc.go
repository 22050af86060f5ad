// Package retain measures what memory-sink tables cost the process
// against what they retain (issue #19 point 7, #17's RSS point): the
// "small-epochs" run feeds a streaming table 20-row epochs through the
// engine and compares the growth of the process's peak resident set with
// the table's retained bytes (Arrow buffers plus bookkeeping); the
// "release" run fills a large table, drops it and reports how far the
// resident set comes back, with and without returning memory to the OS
// (debug.FreeOSMemory). Both run as benchmarks (`go test -bench .
// ./bench/retain/`, one process each, for figures no other workload
// disturbs); the small-epochs run is also the "small-epochs" workload of
// `arrowstream bench`, and BenchmarkSmallEpochsPaced runs it at real time
// (20 rows per 10 ms, -retain.paced 10m).
package retain
