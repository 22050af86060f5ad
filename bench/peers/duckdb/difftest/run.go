package difftest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"
)

// Run checks the cases of seeds seed, seed+1, ... for the given duration
// or number of cases (0: no limit), printing a reproducer per mismatch to
// out (at most maxReports).
func Run(ctx context.Context, seed uint64, dur time.Duration, cases, maxReports int, out io.Writer, log *slog.Logger) (Stats, error) {
	start, last := time.Now(), time.Now()
	var total Stats
	printed := 0
	for i := 0; cases == 0 || i < cases; i++ {
		if dur > 0 && time.Since(start) >= dur || ctx.Err() != nil {
			break
		}
		found, st, err := Check(ctx, seed+uint64(i))
		total.Add(st)
		if err != nil && ctx.Err() == nil {
			return total, fmt.Errorf("case seed %d: %w", seed+uint64(i), err)
		}
		for _, m := range found {
			if printed < maxReports {
				printed++
				fmt.Fprintln(out, m.Report())
			}
		}
		if time.Since(last) >= 30*time.Second {
			last = time.Now()
			log.Info("duckdb difftest progress", "elapsed", time.Since(start).Round(time.Second), "stats", total.String())
		}
	}
	return total, nil
}
