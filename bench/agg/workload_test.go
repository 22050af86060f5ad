package agg

import (
	"context"
	"log/slog"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/bench/gen"
	"github.com/arrowstream/arrowstream/bench/harness"
	"github.com/arrowstream/arrowstream/bench/ysb"
)

// TestEngineAndGoPeersAgree runs both sides of each workload on small data
// sets (the engine on a leak-checked allocator) and checks their answers.
func TestEngineAndGoPeersAgree(t *testing.T) {
	ctx := context.Background()
	t.Run("agg", func(t *testing.T) {
		for _, nk := range []int{1, 1000, 50_000} {
			keys, vals := gen.AggData(100_000, nk, 7)
			want := gen.AggReference(keys, vals)
			recs := gen.AggRecords(memory.NewGoAllocator(), keys, vals, 16<<10)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			cols, err := RunAgg(ctx, mem, recs)
			if err != nil {
				t.Fatal(err)
			}
			got, err := cols.Groups()
			if err != nil {
				t.Fatal(err)
			}
			mem.AssertSize(t, 0)
			if err := gen.CheckAgg(want, got, aggRelTol); err != nil {
				t.Errorf("engine, %d keys: %v", nk, err)
			}
			peer, err := GoAgg(recs)
			if err != nil {
				t.Fatal(err)
			}
			if err := gen.CheckAgg(want, peer, aggRelTol); err != nil {
				t.Errorf("go peer, %d keys: %v", nk, err)
			}
			release(recs)
		}
	})
	t.Run("windowed", func(t *testing.T) {
		d := gen.Windowed(6, 4096, 500, 7)
		if len(d.Want) == 0 {
			t.Fatal("no window closes in the small data set")
		}
		recs := d.Records(memory.NewGoAllocator())
		defer release(recs)
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		got, err := RunWindowed(ctx, mem, recs, t.TempDir(), false)
		if err != nil {
			t.Fatal(err)
		}
		mem.AssertSize(t, 0)
		if err := d.Check(got.Rows()); err != nil {
			t.Errorf("engine: %v", err)
		}
		peer, err := GoWindowed(recs)
		if err != nil {
			t.Fatal(err)
		}
		peerRows := peer.Rows()
		if err := d.Check(peerRows); err != nil {
			t.Errorf("go peer: %v", err)
		}
		// The check must be able to fail.
		peerRows[len(peerRows)/2].N++
		if err := d.Check(peerRows); err == nil {
			t.Error("a wrong count passed the check")
		}
	})
}

// TestWorkloadFigures runs the workloads on tiny sizes with DuckDB skipped
// and checks the figures' shape (never their values).
func TestWorkloadFigures(t *testing.T) {
	cfg := harness.Config{Seed: 1, Dir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)}
	o := ysb.Options{DuckDBSkip: "test"}
	sz := Sizes{AggRows: 50_000, AggKeys: []int{1000, 2_000_000}, WinEpochs: 4, WinEpochRows: 4096, WinKeys: 100, Reps: 2}
	for _, tc := range []struct {
		name string
		run  func() ([]harness.Figure, error)
		want []string // workloads with our throughput and a go-maps ratio
	}{
		{"agg", func() ([]harness.Figure, error) { return runAgg(context.Background(), cfg, o, sz) }, []string{"agg-1k", "agg-2m"}},
		{"windowed", func() ([]harness.Figure, error) { return runWindowed(context.Background(), cfg, o, sz) }, []string{"windowed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			figs, err := tc.run()
			if err != nil {
				t.Fatal(err)
			}
			for _, wl := range tc.want {
				var ours, peer, skipped bool
				for _, f := range figs {
					switch {
					case f.Workload == wl && f.Figure == "throughput" && f.Peer == "" && f.Value > 0:
						ours = true
					case f.Workload == wl && f.Peer == "go-maps" && f.Ratio > 0:
						peer = true
					}
					if f.Figure == "skipped" && f.Source == "test" {
						skipped = true
					}
				}
				if !ours || !peer || !skipped {
					t.Errorf("%s: ours %v, go-maps ratio %v, duckdb skipped %v in %+v", wl, ours, peer, skipped, figs)
				}
			}
		})
	}
}
