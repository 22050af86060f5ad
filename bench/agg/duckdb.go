package agg

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/arrowstream/arrowstream/bench/harness"
	"github.com/arrowstream/arrowstream/bench/ysb"
)

// PeerResult is one line the DuckDB peer program (bench/peers/duckdb,
// cmd/aggpeer) prints: one measured case of a workload on DuckDB over the
// data bench/gen generates from the same arguments, and whether DuckDB's
// answer matched the reference. A run whose answer did not match does not
// count.
type PeerResult struct {
	Workload string  `json:"workload"` // the figure's workload: "agg-1k", "windowed", ...
	Peer     string  `json:"peer"`     // "duckdb-1t", "duckdb-2t", ...
	Threads  int     `json:"threads"`
	Rows     int     `json:"rows"`
	WallSec  float64 `json:"wall_s"`
	CPUSec   float64 `json:"cpu_s"`
	AnswerOK bool    `json:"answer_ok"`
	Diff     string  `json:"diff,omitempty"`
}

// duckArgs are the command-line arguments of cmd/aggpeer for one workload.
type duckArgs struct {
	workload string   // "agg" or "windowed"
	flags    []string // the data set's sizes
	rows     map[string]int
}

// runDuckDB runs cmd/aggpeer over the same data and turns its lines into
// throughput figures with ratios to ours (figure workload → our rate). A
// skipped peer is a "skipped" figure with the reason.
func runDuckDB(ctx context.Context, cfg harness.Config, o ysb.Options, a duckArgs, ours map[string]float64, reps int) ([]harness.Figure, error) {
	skip := o.DuckDBSkip
	if skip == "" {
		if ok, why := ysb.DuckDBAvailable(o.DuckDBDir); !ok {
			skip = why
		}
	}
	var bin string
	if skip == "" {
		var cleanup func()
		var err error
		if bin, cleanup, skip, err = ysb.BuildDuckDBPeer(ctx, o.DuckDBDir, "./cmd/aggpeer"); err != nil {
			return nil, err
		}
		if cleanup != nil {
			defer cleanup()
		}
	}
	if skip != "" {
		cfg.Logger.Warn("DuckDB peer skipped", "workload", a.workload, "reason", skip)
		return []harness.Figure{{Workload: a.workload, Figure: "skipped", Peer: "duckdb", Source: skip}}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Minute)
	defer cancel()
	args := append([]string{"-workload", a.workload, "-seed", fmt.Sprint(cfg.Seed),
		"-threads", fmt.Sprintf("1,%d", runtime.NumCPU()), "-reps", fmt.Sprint(reps)}, a.flags...)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = o.DuckDBDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("agg: DuckDB peer (aggpeer %s of %s): %w: %s", strings.Join(args, " "), o.DuckDBDir, err, lastLines(stderr.String(), 5))
	}
	var figs []harness.Figure
	sc := bufio.NewScanner(bytes.NewReader(out))
	for line := 1; sc.Scan(); line++ {
		var r PeerResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("agg: DuckDB peer output line %d: %w", line, err)
		}
		if !r.AnswerOK {
			return nil, fmt.Errorf("agg: DuckDB peer %s on %s gave a wrong answer (its time does not count): %s", r.Peer, r.Workload, r.Diff)
		}
		our, ok := ours[r.Workload]
		if !ok {
			return nil, fmt.Errorf("agg: DuckDB peer output line %d: unexpected workload %q", line, r.Workload)
		}
		if want := a.rows[r.Workload]; r.Rows != want {
			return nil, fmt.Errorf("agg: DuckDB peer %s on %s ran %d rows, want %d", r.Peer, r.Workload, r.Rows, want)
		}
		rate := harness.PerCore(float64(r.Rows), time.Duration(r.WallSec*float64(time.Second)), time.Duration(r.CPUSec*float64(time.Second)))
		figs = append(figs, harness.Figure{Workload: r.Workload, Figure: "throughput", Value: rate, Unit: "rows/s/core", Peer: r.Peer, Ratio: ratio(our, rate)})
	}
	return figs, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], " | ")
}

func ratio(ours, peer float64) float64 {
	if peer <= 0 {
		return 0
	}
	return ours / peer
}
