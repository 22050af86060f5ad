package main

import (
	"bytes"
	"context"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/bench/harness"
	"github.com/arrowstream/arrowstream/bench/ysb"
)

func benchEnv() (cliEnv, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return cliEnv{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}, &out, &errb
}

// TestBenchQuickEveryWorkload runs `arrowstream bench --quick --json` for
// each registered workload in-process and checks that each prints
// well-formed figures (never their values: the machines are noisy), and
// that --out writes the figures and a PNG plot.
func TestBenchQuickEveryWorkload(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the quick benchmark")
	}
	for _, w := range benchWorkloads(ysb.Options{}) {
		t.Run(w.Name, func(t *testing.T) {
			env, out, errb := benchEnv()
			dir := t.TempDir()
			err := benchCmd(context.Background(), []string{"--quick", "--json", "--no-duckdb", "--log-level", "warn", "--out", dir, w.Name}, env)
			if err != nil {
				t.Fatalf("%v\n%s", err, errb)
			}
			printed := bytes.Clone(out.Bytes())
			figs, err := readFigures(out, "stdout")
			if err != nil {
				t.Fatal(err)
			}
			if len(figs) == 0 {
				t.Fatal("no figures")
			}
			ours, cited, rss := 0, 0, 0
			// Per reported workload (a group reports several): whether it
			// has a figure of ours, a peak_rss and a peak_memory.
			own, rssOf, arrowOf := map[string]bool{}, map[string]bool{}, map[string]bool{}
			for _, f := range figs {
				if f.Figure == "peak_rss" {
					rss++
					rssOf[f.Workload] = true
				}
				if f.Figure == "peak_memory" {
					arrowOf[f.Workload] = true
				}
				if f.Peer == "" && f.Figure != "skipped" {
					own[f.Workload] = true
				}
				if f.Figure == "skipped" {
					if f.Source == "" {
						t.Errorf("skipped peer without a reason: %+v", f)
					}
					continue
				}
				if f.Value < 0 || f.Value == 0 && f.Figure != "peak_memory" || math.IsNaN(f.Value) || f.Unit == "" {
					t.Errorf("ill-formed figure %+v", f)
				}
				if f.Peer != "" && !f.Published && f.Ratio <= 0 && f.Figure != "skipped" {
					t.Errorf("peer figure without a ratio: %+v", f)
				}
				if f.Published && (f.Source == "" || f.Hardware == "" || f.Normalisation == "" || !strings.Contains(f.Peer, "published")) {
					t.Errorf("published figure not labelled or sourced as such: %+v", f)
				}
				if f.Published {
					cited++
				}
				if f.Peer == "" {
					ours++
				}
			}
			if ours == 0 {
				t.Errorf("no figure of Arrowstream itself in %+v", figs)
			}
			// The engine workloads report the process's peak RSS beside
			// the Arrow allocator's peak (read from /proc on Linux).
			if runtime.GOOS == "linux" && rss == 0 {
				t.Errorf("no peak_rss figure in %s", w.Name)
			}
			// Every workload reported, each with both (issue #19: the
			// process's peak RSS next to the Arrow allocator's peak).
			for wl := range own {
				if runtime.GOOS == "linux" && !rssOf[wl] {
					t.Errorf("no peak_rss figure for %s", wl)
				}
				if !arrowOf[wl] {
					t.Errorf("no peak_memory figure (the Arrow allocator's peak) for %s", wl)
				}
			}
			// YSB and every Nexmark query run here have published figures
			// beside them, but q6, which Flink does not run (FLINK-19059;
			// nexmark's README publishes no figure for it).
			if (w.Name == "ysb" || strings.HasPrefix(w.Name, "nexmark-") && w.Name != "nexmark-q6") && cited == 0 {
				t.Errorf("no published figure beside %s", w.Name)
			}
			saved, err := os.ReadFile(filepath.Join(dir, "figures.json"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(saved, printed) {
				t.Error("figures.json differs from the --json output")
			}
			checkPNG(t, filepath.Join(dir, "bench.png"))
		})
	}
}

func checkPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 50 {
		t.Fatalf("%s is %v", path, b)
	}
}

func TestBenchTableAndPlot(t *testing.T) {
	figs := []harness.Figure{
		{Workload: "ysb-dict", Figure: "throughput", Value: 3e7, Unit: "events/s/core"},
		{Workload: "ysb-dict", Figure: "throughput", Value: 5e7, Unit: "events/s/core", Peer: "go-maps", Ratio: 0.6},
		{Workload: "ysb-dict", Figure: "latency_p99", Value: 4.5, Unit: "ms"},
		{Workload: "ysb-dict", Figure: "peak_memory", Value: 3 << 20, Unit: "bytes"},
		{Workload: "ysb-dict", Figure: "peak_rss", Value: 70 << 20, Unit: "bytes"},
		{Workload: "ysb-dict", Figure: "peak_rss_growth", Value: 9 << 20, Unit: "bytes"},
		{Workload: "ysb-dict", Figure: "peak_held", Value: 6 << 20, Unit: "bytes"},
		{Workload: "ysb-dict", Figure: "rss_growth_per_held_byte", Value: 1.5, Unit: "ratio"},
		{Workload: "ysb-dict", Figure: "skipped", Peer: "duckdb", Source: "no C compiler"},
		{Workload: "ysb-dict", Figure: "throughput", Value: 1.6e6, Unit: "events/s/core", Peer: "spark (published)", Published: true, Source: "paper", Ratio: 18,
			Hardware: "10 × 4 cores", Normalisation: "65 M ÷ 40"},
	}
	var tbl bytes.Buffer
	printFigureTable(&tbl, figs)
	for _, want := range []string{"30.00M events/s/core", "4.50 ms", "3.0 MiB", "70.0 MiB", "peak RSS", "9.0 MiB", "6.00 MiB", "1.50", "(RSS - baseline)/held", "go-maps throughput 50.00M events/s/core (0.60x)", "duckdb skipped: no C compiler", "published figures (not measured here", "spark (published)", "hardware: 10 × 4 cores", "per core: 65 M ÷ 40", "source: paper"} {
		if !strings.Contains(tbl.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, tbl.String())
		}
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "figures.json")
	var js bytes.Buffer
	if err := writeFiguresJSON(&js, figs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, js.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	env, _, errb := benchEnv()
	out := filepath.Join(dir, "out.png")
	if err := benchCmd(context.Background(), []string{"--plot", in, out}, env); err != nil {
		t.Fatalf("%v\n%s", err, errb)
	}
	checkPNG(t, out)
	for _, args := range [][]string{{"--plot", in}, {"--plot"}} {
		env, _, errb := benchEnv()
		if err := benchCmd(context.Background(), args, env); err == nil || !strings.Contains(errb.String(), "--plot takes two arguments") {
			t.Errorf("%v: err %v, stderr %q", args, err, errb)
		}
	}
}

func TestReadFiguresErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"workload":"a","figure":"b","value":1}` + "\nnot json\n", "f line 2"},
		{`{"figure":"b","value":1}`, "f line 1: a figure needs a workload"},
	} {
		if _, err := readFigures(strings.NewReader(tc.in), "f"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("readFigures(%q): %v, want %q", tc.in, err, tc.want)
		}
	}
}

func FuzzReadFigures(f *testing.F) {
	f.Add([]byte(`{"workload":"ysb-dict","figure":"throughput","value":3e7,"unit":"events/s/core"}` + "\n"))
	f.Add([]byte(`{"workload":"w","figure":"latency_p99","value":1,"unit":"ms","peer":"p","ratio":2}`))
	f.Add([]byte("\n\n{}"))
	f.Fuzz(func(t *testing.T, in []byte) {
		figs, err := readFigures(bytes.NewReader(in), "fuzz")
		if err == nil {
			plotFigures(figs) // must not panic on any parsed figures
		}
	})
}
