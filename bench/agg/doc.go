// Package agg holds the aggregation workloads of `arrowstream bench`:
//
//   - "agg": SUM(float64), COUNT(*) GROUP BY int64 over 10 M rows (quick:
//     1 M) with 1e3, 1e5 and 1e6 distinct keys (quick: 1e3 and 1e5), the
//     data set of bench/gen (AggData). Arrowstream runs it as SQL over a
//     static table of 64K-row Arrow records.
//   - "windowed": a 10-second tumbling-window count per key with a
//     5-second watermark in Append mode over 32 epochs of 64K (key, ts)
//     rows (quick: 8 epochs), the data set of gen.Windowed. Arrowstream runs
//     it as a streaming query, epoch by epoch, with a checkpoint on disk
//     (NoSync).
//
// The peers run on the same generated rows in the same run: a Go program
// with maps (GoAgg, GoWindowed), and DuckDB with one thread and with all
// threads, in the separate cgo module bench/peers/duckdb run as a
// subprocess (go run ./cmd/aggpeer), which generates the same data from the
// same seed and prints one PeerResult line per measurement. Every answer,
// ours and every peer's, is checked against the reference of bench/gen
// before its time counts.
package agg
