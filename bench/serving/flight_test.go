package serving

import (
	"context"
	"log/slog"
	"testing"

	"github.com/arrowstream/arrowstream/bench/harness"
)

// TestFlightQuick runs the workload in quick mode and checks its figures
// are well formed (not their values).
func TestFlightQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the quick benchmark")
	}
	cfg := harness.Config{Quick: true, Seed: 1, Dir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)}
	figs, err := Workload().Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range figs {
		if f.Value <= 0 || f.Unit == "" {
			t.Errorf("figure without a value or unit: %+v", f)
		}
		seen[f.Workload+"/"+f.Figure+"/"+f.Peer] = true
	}
	for _, k := range []string{"flight-doget/throughput/", "flight-doget/throughput/flight-bare", "flight-doget-small/latency_p50/", "flight-doget-small/latency_p99/flight-bare"} {
		if !seen[k] {
			t.Errorf("no figure %s in %+v", k, figs)
		}
	}
}
