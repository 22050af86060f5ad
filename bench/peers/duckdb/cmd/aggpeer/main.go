// Command aggpeer runs the "agg" or the "windowed" workload of
// `arrowstream bench` on DuckDB and prints one JSON line (agg.PeerResult)
// per measured case and thread setting. `arrowstream bench` runs it as a
// subprocess, because DuckDB needs cgo and the main module has none.
//
// The data comes from bench/gen with the same arguments the command uses
// for Arrowstream, so both engines see the same rows. Loading through the
// appender is not timed; the query (agg: SELECT k, sum(v), count(*) FROM t
// GROUP BY k and the fetching of its rows; windowed: the per-epoch INSERT …
// ON CONFLICT, max(ts) and DELETE … RETURNING statements of windowed.go) is.
// Every answer is checked, untimed, against the reference of bench/gen; a
// wrong one is reported with answer_ok false and no time.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/arrowstream/arrowstream/bench/agg"
	"github.com/arrowstream/arrowstream/bench/gen"
	"github.com/arrowstream/arrowstream/bench/harness"
	duckdbpeer "github.com/arrowstream/arrowstream/bench/peers/duckdb"
)

type options struct {
	workload          string
	seed              uint64
	threads           []int
	reps              int
	rows              int
	keys              []int
	epochs, epochRows int
}

func main() {
	var o options
	var threads, keys string
	flag.StringVar(&o.workload, "workload", "agg", "agg or windowed")
	flag.Uint64Var(&o.seed, "seed", 1, "generator seed")
	flag.StringVar(&threads, "threads", "1", "comma-separated DuckDB thread counts to measure")
	flag.IntVar(&o.reps, "reps", 3, "timed runs per case and thread count (the median counts)")
	flag.IntVar(&o.rows, "rows", 10_000_000, "agg: rows of the data set")
	flag.StringVar(&keys, "keys", "1000,100000,1000000", "agg: comma-separated distinct-key counts; windowed: one key count")
	flag.IntVar(&o.epochs, "epochs", 32, "windowed: epochs")
	flag.IntVar(&o.epochRows, "epochrows", 64<<10, "windowed: rows per epoch")
	flag.Parse()
	var err error
	if o.threads, err = ints("-threads", threads); err == nil {
		o.keys, err = ints("-keys", keys)
	}
	if err == nil {
		err = run(context.Background(), o, json.NewEncoder(os.Stdout))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "aggpeer:", err)
		os.Exit(1)
	}
}

func ints(flagName, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s: %q is not a positive count", flagName, f)
		}
		out = append(out, n)
	}
	return out, nil
}

func run(ctx context.Context, o options, enc *json.Encoder) error {
	switch o.workload {
	case "agg":
		for _, nk := range o.keys {
			if err := runAgg(ctx, o, nk, enc); err != nil {
				return fmt.Errorf("agg, %d keys: %w", nk, err)
			}
		}
		return nil
	case "windowed":
		if len(o.keys) != 1 {
			return fmt.Errorf("windowed: -keys takes one count, got %d", len(o.keys))
		}
		return runWindowed(ctx, o, enc)
	}
	return fmt.Errorf("-workload: %q is neither agg nor windowed", o.workload)
}

func runAgg(ctx context.Context, o options, nk int, enc *json.Encoder) error {
	keys, vals := gen.AggData(o.rows, nk, o.seed)
	want := gen.AggReference(keys, vals)
	t, err := duckdbpeer.LoadAgg(keys, vals)
	if err != nil {
		return fmt.Errorf("loading: %w", err)
	}
	defer t.Close()
	return measure(t, o, agg.AggWorkloadName(nk), o.rows, enc, func() (func() error, error) {
		k, s, c, err := t.Agg(ctx)
		return func() error {
			got, err := gen.AggGroups(k, s, c)
			if err != nil {
				return err
			}
			return gen.CheckAgg(want, got, 1e-9)
		}, err
	})
}

func runWindowed(ctx context.Context, o options, enc *json.Encoder) error {
	d := gen.Windowed(o.epochs, o.epochRows, o.keys[0], o.seed)
	t, err := duckdbpeer.LoadWindowed(d.Keys, d.TS)
	if err != nil {
		return fmt.Errorf("windowed: loading: %w", err)
	}
	defer t.Close()
	return measure(t, o, "windowed", d.Rows(), enc, func() (func() error, error) {
		got, err := t.Windowed(ctx, o.epochs)
		return func() error { return d.Check(got) }, err
	})
}

// measure runs q reps times per thread setting, timed, checks each answer
// untimed and prints one result per thread setting.
func measure(t *duckdbpeer.Table, o options, workload string, rows int, enc *json.Encoder, q func() (check func() error, err error)) error {
	for _, n := range o.threads {
		if err := t.SetThreads(n); err != nil {
			return err
		}
		res := agg.PeerResult{Workload: workload, Peer: fmt.Sprintf("duckdb-%dt", n), Threads: n, Rows: rows, AnswerOK: true}
		var walls, cpus []float64
		for range max(o.reps, 1) {
			sp := harness.StartSpan()
			check, err := q()
			wall, cpu := sp.Stop()
			if err != nil {
				return err
			}
			if err := check(); err != nil {
				res.AnswerOK, res.Diff = false, err.Error()
				break
			}
			walls, cpus = append(walls, wall.Seconds()), append(cpus, cpu.Seconds())
		}
		res.WallSec, res.CPUSec = harness.Median(walls), harness.Median(cpus)
		if err := enc.Encode(res); err != nil {
			return err
		}
	}
	return nil
}
