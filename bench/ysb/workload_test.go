package ysb

import (
	"context"
	"log/slog"
	"testing"

	"github.com/arrowstream/arrowstream/bench/harness"
)

// TestWorkloadsQuick runs every YSB workload in quick mode and checks the
// figures are well formed (not their values: machines here are noisy).
func TestWorkloadsQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the quick benchmark")
	}
	cfg := harness.Config{Quick: true, Seed: 1, Dir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)}
	for _, w := range Workloads(Options{DuckDBSkip: "not in this test"}) {
		t.Run(w.Name, func(t *testing.T) {
			figs, err := w.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, f := range figs {
				if f.Workload == "" || f.Figure == "" {
					t.Errorf("figure without a name: %+v", f)
				}
				if f.Figure != "skipped" && (f.Value <= 0 || f.Unit == "") {
					t.Errorf("figure without a value or unit: %+v", f)
				}
				if f.Published && f.Source == "" {
					t.Errorf("published figure without a source: %+v", f)
				}
				seen[f.Workload+"/"+f.Figure+"/"+f.Peer] = true
			}
			var want []string
			switch w.Name {
			case "ysb":
				want = []string{"ysb-dict/throughput/", "ysb-dict/throughput/go-maps", "ysb-dict/latency_p99/", "ysb-dict/peak_memory/",
					"ysb-plain/throughput/", "ysb-json/throughput/", "ysb-json/decode_throughput/", "ysb-dict/skipped/duckdb"}
			}
			for _, k := range want {
				if !seen[k] {
					t.Errorf("no figure %s in %v", k, figs)
				}
			}
		})
	}
}
