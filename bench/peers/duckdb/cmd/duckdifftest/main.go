// Command duckdifftest runs the DuckDB oracle of the differential tester
// for a given time: every generated query (in the subset of the dialect
// where Spark and DuckDB agree) runs in Arrowstream and in DuckDB, and a
// differing answer is printed with a reproducer.
//
//	cd bench/peers/duckdb && go run ./cmd/duckdifftest -duration 30m -seed 1
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"time"

	"github.com/arrowstream/arrowstream/bench/peers/duckdb/difftest"
)

func main() {
	dur := flag.Duration("duration", time.Minute, "how long to run (0: until -cases or Ctrl-C)")
	cases := flag.Int("cases", 0, "stop after this many cases (0: no limit)")
	seed := flag.Uint64("seed", 1, "seed of the first case (case i uses seed+i)")
	maxReports := flag.Int("max-reports", 100, "print at most this many reproducers")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	st, err := difftest.Run(ctx, *seed, *dur, *cases, *maxReports, os.Stdout, slog.New(slog.NewTextHandler(os.Stderr, nil)))
	fmt.Printf("duckdifftest seed=%d elapsed=%s %s\n", *seed, time.Since(start).Round(time.Second), st)
	if err != nil {
		fmt.Fprintln(os.Stderr, "duckdifftest:", err)
		os.Exit(1)
	}
	if st.Mismatches > 0 {
		os.Exit(1)
	}
}
