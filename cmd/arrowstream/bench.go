package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/arrowstream/arrowstream/bench/agg"
	"github.com/arrowstream/arrowstream/bench/harness"
	"github.com/arrowstream/arrowstream/bench/nexmark"
	"github.com/arrowstream/arrowstream/bench/published"
	"github.com/arrowstream/arrowstream/bench/retain"
	"github.com/arrowstream/arrowstream/bench/serving"
	"github.com/arrowstream/arrowstream/bench/ysb"
	"github.com/arrowstream/arrowstream/internal/hugeheap"
)

const benchExamples = `  arrowstream bench --quick                   # every workload, small inputs, about a minute
  arrowstream bench ysb                       # the Yahoo Streaming Benchmark with its peers
  arrowstream bench --json --out results ysb  # JSON lines on stdout, figures.json and bench.png in results/
  arrowstream bench --plot figures.json out.png
`

// benchFlags are the settings of `arrowstream bench`.
type benchFlags struct {
	quick, json bool
	out         string
	plot        bool
	seed        uint64
	duckdbDir   string
	noDuckDB    bool
	memTarget   float64
	hugePages   bool
	hugeReserve int64
	logs        *logFlags
}

func newBenchFlags() (*flag.FlagSet, *benchFlags) {
	fs := newFlagSet("bench", "[flags] [WORKLOAD...] | --plot FIGURES.json OUT.png", benchExamples)
	f := &benchFlags{}
	fs.BoolVar(&f.quick, "quick", false, "small inputs and one repetition: every workload within about a minute on 2 cores")
	fs.BoolVar(&f.json, "json", false, "print one JSON object per figure instead of the table")
	fs.StringVar(&f.out, "out", "", "also write figures.json and bench.png into this `directory`")
	fs.BoolVar(&f.plot, "plot", false, "draw the PNG plot of a figures file (JSON lines) and exit: --plot FIGURES.json OUT.png")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the generated data")
	fs.StringVar(&f.duckdbDir, "duckdb-dir", "", "`directory` of the DuckDB peer module (default: bench/peers/duckdb above the working directory)")
	fs.BoolVar(&f.noDuckDB, "no-duckdb", false, "skip the DuckDB peers (they are built with cgo, about 80 s the first time)")
	fs.Float64Var(&f.memTarget, "memory-target", 0, "run the engine under a Go soft memory limit of the baseline plus this many bytes per held byte (state + sink), set after every epoch; costs collector CPU (0: the runtime's defaults)")
	fs.BoolVar(&f.hugePages, "huge-pages", false, hugePagesUsage+"; the whole process, the engine and its Go peers alike")
	fs.Int64Var(&f.hugeReserve, "huge-pages-reserve", 0, "with --huge-pages, grow the heap once by this many `bytes`, untouched, and advise them, so that later growth lands in advised memory (0: none)")
	f.logs = addLogFlags(fs)
	return fs, f
}

func runBench(args []string, stdout, stderr io.Writer) int {
	ctx, cancel := signalContext(stderr)
	defer cancel()
	return exitCode(benchCmd(ctx, args, osEnv(stdout, stderr)), "bench", stderr)
}

// benchWorkloads is the registry of workloads, in the order they run.
func benchWorkloads(o ysb.Options) []harness.Workload {
	ws := ysb.Workloads(o)
	ws = append(ws, agg.Workloads(o)...)
	ws = append(ws, serving.Workload())
	ws = append(ws, nexmark.Workloads()...)
	ws = append(ws, retain.Workload())
	return ws
}

// benchCmd is `arrowstream bench`: it runs the named workloads (all by
// default) and prints their figures.
func benchCmd(ctx context.Context, args []string, env cliEnv) error {
	fs, f := newBenchFlags()
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	usageErr := func(format string, a ...any) error {
		fmt.Fprintf(env.stderr, "arrowstream bench: "+format+"\n", a...)
		return errUsage{2}
	}
	if f.plot {
		if fs.NArg() != 2 {
			return usageErr("--plot takes two arguments, FIGURES.json and OUT.png; got %d", fs.NArg())
		}
		in, err := os.Open(fs.Arg(0))
		if err != nil {
			return err
		}
		defer in.Close()
		figs, err := readFigures(in, fs.Arg(0))
		if err != nil {
			return err
		}
		return writePlot(fs.Arg(1), figs)
	}
	logger := f.logs.logger(env.stderr)
	o := ysb.Options{DuckDBDir: f.duckdbDir}
	if o.DuckDBDir == "" {
		o.DuckDBDir = ysb.FindDuckDBDir()
	}
	switch {
	case f.noDuckDB:
		o.DuckDBSkip = "--no-duckdb"
	case f.quick:
		o.DuckDBSkip = "--quick (the cgo build alone can take longer than a quick run)"
	}
	all := benchWorkloads(o)
	selected, err := selectWorkloads(all, fs.Args())
	if err != nil {
		return usageErr("%v", err)
	}
	dir, err := os.MkdirTemp("", "arrowstream-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if f.memTarget < 0 {
		return fmt.Errorf("--memory-target %v: must be positive (or 0: none)", f.memTarget)
	}
	if f.hugeReserve < 0 {
		return fmt.Errorf("--huge-pages-reserve %d: must be positive (or 0: none)", f.hugeReserve)
	}
	// Process-wide, before any workload: the engine and its peers run
	// under the same advice, and every run still starts from a heap
	// returned to the OS (harness.Settle; the advice outlives that).
	hh := startHugeHeap(f.hugePages, hugeheap.Options{Reserve: f.hugeReserve}, logger)
	defer hh.Stop()
	cfg := harness.Config{Quick: f.quick, Seed: f.seed, Dir: dir, Logger: logger, MemoryTarget: f.memTarget}
	figs, err := runWorkloads(ctx, cfg, selected)
	if err != nil {
		return err
	}
	// Cited figures of other engines, for the workloads that ran: flagged
	// Published and listed apart from the measured ones.
	figs = append(figs, published.Figures(figs)...)
	if f.json {
		if err := writeFiguresJSON(env.stdout, figs); err != nil {
			return err
		}
	} else {
		printFigureTable(env.stdout, figs)
	}
	if f.out != "" {
		if err := os.MkdirAll(f.out, 0o755); err != nil {
			return err
		}
		jf, err := os.Create(filepath.Join(f.out, "figures.json"))
		if err != nil {
			return err
		}
		if err := writeFiguresJSON(jf, figs); err != nil {
			jf.Close()
			return err
		}
		if err := jf.Close(); err != nil {
			return err
		}
		return writePlot(filepath.Join(f.out, "bench.png"), figs)
	}
	return nil
}

// selectWorkloads returns the named workloads (all when names is empty),
// refusing unknown names.
func selectWorkloads(all []harness.Workload, names []string) ([]harness.Workload, error) {
	if len(names) == 0 {
		return all, nil
	}
	var out []harness.Workload
	for _, n := range names {
		i := slices.IndexFunc(all, func(w harness.Workload) bool { return strings.EqualFold(w.Name, n) })
		if i < 0 {
			known := make([]string, len(all))
			for j, w := range all {
				known[j] = w.Name
			}
			return nil, fmt.Errorf("unknown workload %q (known: %s)", n, strings.Join(known, ", "))
		}
		out = append(out, all[i])
	}
	return out, nil
}

func runWorkloads(ctx context.Context, cfg harness.Config, ws []harness.Workload) ([]harness.Figure, error) {
	var figs []harness.Figure
	for _, w := range ws {
		cfg.Logger.Info("running workload", "workload", w.Name, "quick", cfg.Quick)
		got, err := w.Run(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("workload %s: %w", w.Name, err)
		}
		figs = append(figs, got...)
	}
	return figs, nil
}

// figureKind classifies a figure for the table and the plot, whatever the
// workload's own naming: "throughput" (per core), "p50", "p99", "peak"
// (the Arrow allocator's peak), "rss" (the process's peak resident set),
// "growth" (peak RSS over the idle baseline taken once the input was
// generated), "held" (the most the query held: state plus retained sink
// bytes), "growth/held" (their ratio) or "" for any other figure.
func figureKind(f harness.Figure) string {
	switch f.Figure {
	case "throughput", "events/s/core":
		return "throughput"
	case "latency_p50", "epoch_latency_p50":
		return "p50"
	case "latency_p99", "epoch_latency_p99":
		return "p99"
	case "peak_memory":
		return "peak"
	case "peak_rss":
		return "rss"
	case "peak_rss_growth":
		return "growth"
	case "peak_held":
		return "held"
	case "rss_growth_per_held_byte":
		return "growth/held"
	}
	return ""
}

func writeFiguresJSON(w io.Writer, figs []harness.Figure) error {
	enc := json.NewEncoder(w)
	for _, f := range figs {
		if err := enc.Encode(f); err != nil {
			return err
		}
	}
	return nil
}

// printFigureTable prints one row per workload: Arrowstream's throughput,
// latencies and peak memory, then one column per peer with its figure and
// the ratio; skipped peers and published figures are listed below.
func printFigureTable(w io.Writer, figs []harness.Figure) {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "workload\tthroughput\tp50\tp99\tpeak memory (Arrow)\tpeak RSS\tRSS - baseline\theld\t(RSS - baseline)/held\tpeers (same run: their figure, ours/theirs)")
	var order []string
	byWL := map[string][]harness.Figure{}
	for _, f := range figs {
		if f.Published {
			continue
		}
		if _, ok := byWL[f.Workload]; !ok {
			order = append(order, f.Workload)
		}
		byWL[f.Workload] = append(byWL[f.Workload], f)
	}
	for _, wl := range order {
		var thr, p50, p99, peak, rss, growth, held, perHeld string = "-", "-", "-", "-", "-", "-", "-", "-"
		var peers []string
		for _, f := range byWL[wl] {
			kind := figureKind(f)
			switch {
			case f.Figure == "skipped":
				peers = append(peers, fmt.Sprintf("%s skipped: %s", f.Peer, f.Source))
			case f.Peer != "" && kind != "":
				peers = append(peers, fmt.Sprintf("%s %s %s %s (%.2fx)", f.Peer, kind, humanRate(f.Value), f.Unit, f.Ratio))
			case f.Peer != "":
				// Other peer figures (raw events/s) stay in the JSON.
			case kind == "throughput":
				thr = humanRate(f.Value) + " " + f.Unit
			case kind == "p50":
				p50 = fmt.Sprintf("%.2f %s", f.Value, f.Unit)
			case kind == "p99":
				p99 = fmt.Sprintf("%.2f %s", f.Value, f.Unit)
			case kind == "peak":
				peak = fmt.Sprintf("%.1f MiB", f.Value/(1<<20))
			case kind == "rss":
				rss = fmt.Sprintf("%.1f MiB", f.Value/(1<<20))
			case kind == "growth":
				growth = fmt.Sprintf("%.1f MiB", f.Value/(1<<20))
			case kind == "held":
				held = fmt.Sprintf("%.2f MiB", f.Value/(1<<20))
			case kind == "growth/held":
				perHeld = fmt.Sprintf("%.2f", f.Value)
			default:
				peers = append(peers, fmt.Sprintf("%s %s %s", f.Figure, humanRate(f.Value), f.Unit))
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", wl, thr, p50, p99, peak, rss, growth, held, perHeld, strings.Join(peers, "; "))
	}
	tw.Flush()
	first := true
	for _, f := range figs {
		if !f.Published {
			continue
		}
		if first {
			fmt.Fprintln(w, "\npublished figures (not measured here; other hardware and setups):")
			first = false
		}
		ratio := ""
		if f.Ratio > 0 {
			ratio = fmt.Sprintf(" (ours/theirs %.1fx)", f.Ratio)
		}
		fmt.Fprintf(w, "  %s %s: %s %s%s\n", f.Workload, f.Peer, humanRate(f.Value), f.Unit, ratio)
		for _, l := range [][2]string{{"hardware", f.Hardware}, {"per core", f.Normalisation}, {"source", f.Source}} {
			if l[1] != "" {
				fmt.Fprintf(w, "      %s: %s\n", l[0], l[1])
			}
		}
	}
}
