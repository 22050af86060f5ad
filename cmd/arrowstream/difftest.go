package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"time"

	"github.com/arrowstream/arrowstream/internal/difftest"
)

// runDifftest implements "arrowstream difftest": it checks random queries
// over random tables with the engine's differential oracles (optimizer on
// vs off, ternary logic partitioning, leaks, panics) for a given time or
// number of cases, prints a reproducer per mismatch on stdout and the
// totals at the end. Exit status 0 when nothing was found, 1 when a
// mismatch was, 2 for bad usage.
func runDifftest(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("difftest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dur := fs.Duration("duration", time.Minute, "how long to run (0: until -cases or Ctrl-C)")
	cases := fs.Int("cases", 0, "stop after this many cases (pairs of tables with their queries; 0: no limit)")
	seed := fs.Uint64("seed", 1, "seed of the first case (case i uses seed+i, so a reported seed reproduces alone with -seed N -cases 1)")
	perCase := fs.Int("queries", 10, "queries per case")
	noDistinct := fs.Bool("no-distinct-agg", false, "leave count(DISTINCT ...) out of the queries")
	reduce := fs.Bool("reduce", true, "shrink each mismatch before printing it")
	maxReports := fs.Int("max-reports", 100, "print at most this many reproducers")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: arrowstream difftest [-duration 1h] [-seed N] [-cases N] [-queries N]")
		fmt.Fprintln(stderr, "(the DuckDB oracle is in the separate module bench/peers/duckdb: see docs/difftest.md)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 0 || *perCase < 1 || *cases < 0 || *dur < 0 {
		fs.Usage()
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	start := time.Now()
	st, err := difftest.Run(ctx, difftest.RunOptions{
		Seed: *seed, Duration: *dur, Cases: *cases, Reduce: *reduce, MaxReports: *maxReports,
		Gen: difftest.Options{QueriesPerCase: *perCase, NoDistinctAgg: *noDistinct},
		Out: stdout, Logger: logger,
	})
	fmt.Fprintf(stdout, "difftest seed=%d elapsed=%s %s\n", *seed, time.Since(start).Round(time.Second), st)
	if err != nil {
		fmt.Fprintf(stderr, "arrowstream difftest: %v\n", err)
		return 1
	}
	if st.Mismatches > 0 {
		return 1
	}
	return 0
}
