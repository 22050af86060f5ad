package difftest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"
)

// RunOptions bound a run of the engine oracles.
type RunOptions struct {
	Seed     uint64        // the first case's seed; cases use Seed, Seed+1, ...
	Duration time.Duration // stop after this long (0: no limit)
	Cases    int           // stop after this many cases (0: no limit)
	Gen      Options
	// Reduce shrinks each mismatch before it is printed.
	Reduce bool
	// MaxReports caps the reproducers printed (the count goes on).
	MaxReports int
	Out        io.Writer // reproducers
	Logger     *slog.Logger
}

// Run checks cases until the duration or count is reached or ctx ends,
// printing a reproducer for each mismatch and progress lines to the
// logger, and returns what was checked.
func Run(ctx context.Context, o RunOptions) (Stats, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxReports == 0 {
		o.MaxReports = 100
	}
	start := time.Now()
	var total Stats
	total.Checked = map[string]int{}
	lastLog := start
	printed := 0
	for i := 0; ; i++ {
		if o.Cases > 0 && i >= o.Cases || o.Duration > 0 && time.Since(start) >= o.Duration {
			break
		}
		if ctx.Err() != nil {
			break
		}
		seed := o.Seed + uint64(i)
		found, st, err := Check(ctx, seed, o.Gen)
		total.add(st)
		if err != nil && ctx.Err() == nil {
			return total, fmt.Errorf("case seed %d: %w", seed, err)
		}
		for _, m := range found {
			if printed >= o.MaxReports {
				break
			}
			printed++
			if o.Reduce {
				m = ReduceMismatch(ctx, m, o.Gen)
			}
			fmt.Fprintln(o.Out, m.Report())
		}
		if time.Since(lastLog) >= 30*time.Second {
			lastLog = time.Now()
			o.Logger.Info("difftest progress", "elapsed", time.Since(start).Round(time.Second), "stats", total.String())
		}
	}
	return total, nil
}
