package duckdbpeer

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"io"
	"time"

	"github.com/duckdb/duckdb-go/v2"
)

// duckTable is an in-memory DuckDB database holding the data set as table
// t(k BIGINT NOT NULL, v DOUBLE NOT NULL), with the one connection every
// statement of the benchmark runs on (DuckDB settings such as threads are
// then certain to apply to the timed query).
type duckTable struct {
	db   *sql.DB
	conn *sql.Conn
}

// loadDuck creates the table and fills it through DuckDB's Appender, which
// writes whole data chunks into the table (see the package comment for why
// not the Arrow view).
func loadDuck(keys []int64, vals []float64) (_ *duckTable, err error) {
	ctx := context.Background()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, err
	}
	t := &duckTable{db: db}
	defer func() {
		if err != nil {
			t.close()
		}
	}()
	if t.conn, err = db.Conn(ctx); err != nil {
		return nil, err
	}
	if _, err = t.conn.ExecContext(ctx, "CREATE TABLE t (k BIGINT NOT NULL, v DOUBLE NOT NULL)"); err != nil {
		return nil, err
	}
	err = t.conn.Raw(func(dc any) error {
		conn, ok := dc.(driver.Conn)
		if !ok {
			return fmt.Errorf("driver connection is a %T", dc)
		}
		app, err := duckdb.NewAppenderFromConn(conn, "", "t")
		if err != nil {
			return err
		}
		for i, k := range keys {
			if err := app.AppendRow(k, vals[i]); err != nil {
				app.Close()
				return fmt.Errorf("appending row %d: %w", i, err)
			}
		}
		return app.Close()
	})
	if err != nil {
		return nil, err
	}
	var n int
	if err = t.conn.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil {
		return nil, err
	}
	if n != len(keys) {
		return nil, fmt.Errorf("table t has %d rows after loading %d", n, len(keys))
	}
	return t, nil
}

func (t *duckTable) close() {
	if t.conn != nil {
		t.conn.Close()
	}
	t.db.Close()
}

// setThreads sets DuckDB's worker thread count (a database-wide setting).
func (t *duckTable) setThreads(n int) error {
	_, err := t.conn.ExecContext(context.Background(), fmt.Sprintf("SET threads = %d", n))
	return err
}

const duckAggQuery = "SELECT k, sum(v), count(*) FROM t GROUP BY k"

// aggResult holds the columns of one engine's answer; its slices are reused
// across queries so that fetching does not allocate in the timed loop.
type aggResult struct {
	keys   []int64
	sums   []float64
	counts []int64
}

// query runs duckAggQuery and reads every result row into r. DuckDB
// materialises the whole result inside QueryContext (duckdb-go executes a
// pending, non-streaming result); fetch is the time spent reading the rows
// out of it afterwards. The rows are read through the driver's own
// driver.Rows rather than database/sql's Rows.Scan, whose conversions would
// otherwise charge DuckDB about 0.2 µs per result row that has nothing to
// do with the aggregation.
func (t *duckTable) query(ctx context.Context, r *aggResult) (fetch time.Duration, err error) {
	r.keys, r.sums, r.counts = r.keys[:0], r.sums[:0], r.counts[:0]
	err = t.conn.Raw(func(dc any) error {
		q, ok := dc.(driver.QueryerContext)
		if !ok {
			return fmt.Errorf("driver connection %T cannot query", dc)
		}
		rows, err := q.QueryContext(ctx, duckAggQuery, nil)
		if err != nil {
			return err
		}
		defer rows.Close()
		start := time.Now()
		row := make([]driver.Value, 3)
		for {
			if err := rows.Next(row); err == io.EOF {
				break
			} else if err != nil {
				return err
			}
			k, ok1 := row[0].(int64)
			s, ok2 := row[1].(float64)
			c, ok3 := row[2].(int64)
			if !ok1 || !ok2 || !ok3 {
				return fmt.Errorf("result row (%T, %T, %T), want (int64, float64, int64)", row[0], row[1], row[2])
			}
			r.keys = append(r.keys, k)
			r.sums = append(r.sums, s)
			r.counts = append(r.counts, c)
		}
		fetch = time.Since(start)
		return nil
	})
	return fetch, err
}
