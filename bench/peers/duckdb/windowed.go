package duckdbpeer

import (
	"context"
	"database/sql/driver"
	"fmt"
	"io"
	"time"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/arrowstream/arrowstream/bench/gen"
)

// loadDuckWindowed loads each epoch into its own table e<i>(key, ts).
func loadDuckWindowed(keys, ts [][]int64) (_ *duckTable, err error) {
	ctx := context.Background()
	t, err := loadDuck(nil, nil) // an empty table t and the connection
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			t.close()
		}
	}()
	for e := range keys {
		if _, err = t.conn.ExecContext(ctx, fmt.Sprintf("CREATE TABLE e%d (key BIGINT NOT NULL, ts TIMESTAMP NOT NULL)", e)); err != nil {
			return nil, err
		}
		err = t.conn.Raw(func(dc any) error {
			app, err := duckdb.NewAppenderFromConn(dc.(driver.Conn), "", fmt.Sprintf("e%d", e))
			if err != nil {
				return err
			}
			for i, k := range keys[e] {
				if err := app.AppendRow(k, time.UnixMicro(ts[e][i]).UTC()); err != nil {
					app.Close()
					return err
				}
			}
			return app.Close()
		})
		if err != nil {
			return nil, err
		}
	}
	return t, nil
}

// runDuckWindowed runs the incremental per-epoch statements (see the top of
// the file) on a fresh agg table and returns the emitted windows.
func runDuckWindowed(ctx context.Context, t *duckTable, epochs int) ([]gen.WinRow, error) {
	if _, err := t.conn.ExecContext(ctx, "CREATE OR REPLACE TABLE agg (w BIGINT NOT NULL, key BIGINT NOT NULL, n BIGINT NOT NULL, PRIMARY KEY (w, key))"); err != nil {
		return nil, err
	}
	var out []gen.WinRow
	// wm is the watermark from the epochs so far: the next epoch's rows are
	// late iff their window ends at or before it (Arrowstream's no-data batch
	// makes it the late watermark of the next data batch).
	wm := int64(0)
	err := t.conn.Raw(func(dc any) error {
		c := dc.(interface {
			driver.ExecerContext
			driver.QueryerContext
		})
		for e := 0; e < epochs; e++ {
			ins := fmt.Sprintf(`INSERT INTO agg SELECT epoch_us(time_bucket(INTERVAL 10 SECONDS, ts)) AS w, key, count(*) AS n FROM e%d
				WHERE epoch_us(time_bucket(INTERVAL 10 SECONDS, ts)) + %d > %d GROUP BY ALL
				ON CONFLICT (w, key) DO UPDATE SET n = agg.n + excluded.n`, e, gen.WinWindowUs, wm)
			if _, err := c.ExecContext(ctx, ins, nil); err != nil {
				return err
			}
			rows, err := c.QueryContext(ctx, fmt.Sprintf("SELECT epoch_us(max(ts)) FROM e%d", e), nil)
			if err != nil {
				return err
			}
			row := make([]driver.Value, 3)
			err = rows.Next(row[:1])
			rows.Close()
			if err != nil {
				return err
			}
			m, ok := row[0].(int64)
			if !ok {
				return fmt.Errorf("max(ts) is %T", row[0])
			}
			wm = max(wm, m-gen.WinDelayUs)
			rows, err = c.QueryContext(ctx, fmt.Sprintf("DELETE FROM agg WHERE w + %d <= %d RETURNING key, w, n", gen.WinWindowUs, wm), nil)
			if err != nil {
				return err
			}
			for {
				if err := rows.Next(row); err == io.EOF {
					break
				} else if err != nil {
					rows.Close()
					return err
				}
				k, ok1 := row[0].(int64)
				w, ok2 := row[1].(int64)
				n, ok3 := row[2].(int64)
				if !ok1 || !ok2 || !ok3 {
					rows.Close()
					return fmt.Errorf("DELETE RETURNING row (%T, %T, %T)", row[0], row[1], row[2])
				}
				out = append(out, gen.WinRow{Key: k, Start: w, N: n})
			}
			rows.Close()
		}
		return nil
	})
	return out, err
}
