// Package duckdbpeer measures DuckDB on the data of Arrowstream's benchmarks,
// so that Arrowstream's figures can be read as ratios to a well-known engine
// measured in the same run, on the same machine and the same rows.
//
// # Why a separate module
//
// DuckDB is reached through github.com/duckdb/duckdb-go/v2, which links
// DuckDB's C++ library with cgo: a cold build takes about 80 s and a test
// binary weighs about 72 MB. Keeping the peer in its own Go module (this
// directory has its own go.mod, with a replace directive pointing at the
// repository root) keeps cgo and DuckDB out of the main module's dependency
// graph: `go build ./...`, `go test ./...` and CI of the main module never
// compile it. The benchmark data comes from the main module's pure-Go
// package bench/gen, so both engines see identical rows.
//
// # How the peer is measured
//
// Data is loaded into an in-memory DuckDB table through the Appender, not
// through duckdb-go's Arrow views (build tag duckdb_arrow): those use
// arrow-go v18 types, not the v17 the project uses, and were seen to drop
// pushed-down filters and return wrong rows. Loading is not timed; only the
// query and the fetching of its result rows are. Every answer, DuckDB's and
// Arrowstream's, is checked against gen.AggReference before its time counts,
// and a wrong answer fails the benchmark.
//
// # Running
//
// One core, both engines in the same run (the summary table printed at the
// end gives the ratios):
//
//	cd bench/peers/duckdb
//	go test -run '^$' -bench Agg -benchtime 3x -cpu 1 -timeout 60m
//
// -cpu 1 sets GOMAXPROCS to 1, so Arrowstream (and the Go runtime,
// including its garbage collector) runs on one core; `SET threads=1` keeps
// DuckDB's query on the calling thread, inside the cgo call. The
// duckdb-allthreads variant sets DuckDB's threads to runtime.NumCPU() for
// reference; it is not part of the one-core comparison. To pin the whole
// process to one CPU as well, prefix the command with `taskset -c 1`.
//
// The flags -agg.rows and -agg.keys shrink the data set for quick runs.
//
// BenchmarkWindowFunctions (analytic_test.go) compares window functions the
// same way: row_number() and a running sum(v) OVER (PARTITION BY k ORDER
// BY v) over 10M rows and 1000 keys, DuckDB on one thread against
// Arrowstream's WindowOp, each answer checked against a reference:
//
//	go test -run '^$' -bench WindowFunctions -benchtime 2x -cpu 1 -timeout 90m
//
// -window.rows and -window.keys change the data set.
//
// # As workloads of `arrowstream bench`
//
// cmd/aggpeer runs the same two comparisons for the "agg" and "windowed"
// workloads of `arrowstream bench` (package bench/agg), which starts it
// with `go run ./cmd/aggpeer` in this directory and reads one JSON line per
// measurement; cmd/ysbpeer does the same for "ysb". The DuckDB code they
// share with the benchmarks is in duck.go, windowed.go and api.go.
//
// # The differential tester's DuckDB oracle
//
// Package difftest (and cmd/duckdifftest) runs the random queries of the
// main module's internal/difftest in Arrowstream and in DuckDB over the
// same tables and reports differing answers (docs/difftest.md):
//
//	go run ./cmd/duckdifftest -duration 30m -seed 1
package duckdbpeer
