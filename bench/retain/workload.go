package retain

import (
	"context"
	"fmt"
	"os"

	"github.com/arrowstream/arrowstream/bench/harness"
	"github.com/arrowstream/arrowstream/memsink"
)

// Workload is "small-epochs" of `arrowstream bench`: the table
// fed 20-row epochs back to back through the engine (18,000 epochs, 360K
// rows; 4,000 with --quick), reporting the process's peak RSS, its growth
// over the idle baseline, the table's retained bytes (Arrow buffers plus
// bookkeeping) as the held bytes, their ratio, and the bookkeeping per
// epoch. The paced, real-time run is BenchmarkSmallEpochsPaced.
func Workload() harness.Workload {
	return harness.Workload{
		Name:        "small-epochs",
		Description: "a memory-sink table fed 20-row epochs (SELECT * FROM STREAM, Append): process memory against the retained bytes",
		Run: func(ctx context.Context, cfg harness.Config) ([]harness.Figure, error) {
			const wl = "small-epochs"
			epochs := 18_000
			if cfg.Quick {
				epochs = 4_000
			}
			dir, err := os.MkdirTemp(cfg.Dir, "small-epochs-")
			if err != nil {
				return nil, fmt.Errorf("%s: %w", wl, err)
			}
			defer os.RemoveAll(dir)
			sp := harness.StartSpan()
			res, err := Run(ctx, Config{Epochs: epochs, RowsPerEpoch: 20, Dir: dir, Sink: memsink.Options{}, MemoryTarget: cfg.MemoryTarget})
			wall, cpu := sp.Stop()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", wl, err)
			}
			figs := []harness.Figure{
				{Workload: wl, Figure: "epochs/cpu-s", Value: harness.PerCore(float64(epochs), wall, cpu), Unit: "epochs/s"},
				{Workload: wl, Figure: "bookkeeping_per_epoch", Value: float64(res.Size.Overhead) / float64(max(res.Epochs, 1)), Unit: "bytes"},
				{Workload: wl, Figure: "peak_memory", Value: float64(res.PeakArrow), Unit: "bytes"},
			}
			return append(figs, res.Memory.Figures(wl)...), nil
		},
	}
}
