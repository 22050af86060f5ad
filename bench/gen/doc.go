// Package gen generates the data sets of Arrowstream's benchmarks and the
// reference answers that every engine's result is checked against.
//
// Generators are deterministic: the same arguments give the same data on
// every machine and Go version (they use their own splitmix64 stream, not
// math/rand, whose algorithms are not promised to stay fixed), so figures
// taken on different days, and by different peers, are about the same rows.
//
// The hash-aggregation data set (AggData, AggRecords, AggReference) is the one
// of the Foundation issue: SUM(float64), COUNT(*) GROUP BY int64 key. Its key
// values are distinct pseudo-random int64s, not 0..n-1, so that no engine can
// replace hashing by a dense array indexed by the key (DuckDB, for one, uses
// a "perfect hash" aggregate when the statistics show a small key range);
// the benchmark measures hash aggregation.
//
// The package is pure Go and uses no cgo: peers that need cgo (DuckDB) live
// in their own Go modules under bench/peers/ and import this one.
package gen
