package duckdbpeer

import (
	"context"

	"github.com/arrowstream/arrowstream/bench/gen"
)

// Table is an in-memory DuckDB database holding one benchmark data set,
// loaded through the appender, with the one connection every statement
// runs on. cmd/aggpeer measures it; the benchmarks of this package use the
// same code.
type Table struct{ t *duckTable }

// LoadAgg loads the hash-aggregation data set as t(k BIGINT, v DOUBLE).
func LoadAgg(keys []int64, vals []float64) (*Table, error) {
	t, err := loadDuck(keys, vals)
	if err != nil {
		return nil, err
	}
	return &Table{t}, nil
}

// LoadWindowed loads each epoch of the windowed data set into its own
// table e<i>(key BIGINT, ts TIMESTAMP).
func LoadWindowed(keys, ts [][]int64) (*Table, error) {
	t, err := loadDuckWindowed(keys, ts)
	if err != nil {
		return nil, err
	}
	return &Table{t}, nil
}

// Close closes the connection and the database.
func (t *Table) Close() { t.t.close() }

// SetThreads sets DuckDB's worker thread count.
func (t *Table) SetThreads(n int) error { return t.t.setThreads(n) }

// Agg runs SELECT k, sum(v), count(*) FROM t GROUP BY k and returns the
// result columns.
func (t *Table) Agg(ctx context.Context) (keys []int64, sums []float64, counts []int64, err error) {
	var r aggResult
	if _, err := t.t.query(ctx, &r); err != nil {
		return nil, nil, nil, err
	}
	return r.keys, r.sums, r.counts, nil
}

// Windowed runs the incremental per-epoch statements of the windowed count
// over epochs e0 … e<epochs-1> on a fresh state table and returns the
// emitted windows (see windowed.go).
func (t *Table) Windowed(ctx context.Context, epochs int) ([]gen.WinRow, error) {
	return runDuckWindowed(ctx, t.t, epochs)
}
