package published_test

import (
	"math"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/bench/harness"
	"github.com/arrowstream/arrowstream/bench/nexmark"
	"github.com/arrowstream/arrowstream/bench/published"
)

// TestFiguresAreSourcedAndNormalised holds every published figure to the
// rule: a source with a place in it, the hardware, the cores, the division
// spelled out, a workload that `arrowstream bench` runs, and the per-core
// figure the source states when it states one.
func TestFiguresAreSourcedAndNormalised(t *testing.T) {
	workloads := map[string]bool{"ysb-dict": true}
	for _, q := range nexmark.QueryNames() {
		workloads["nexmark-"+q] = true
	}
	all := published.All()
	if len(all) == 0 {
		t.Fatal("no published figures")
	}
	for _, f := range all {
		name := f.Engine + "/" + f.Workload
		switch {
		case f.Engine == "" || f.Query == "":
			t.Errorf("%s: engine or query missing: %+v", name, f)
		case !workloads[f.Workload]:
			t.Errorf("%s: workload %q is not one that arrowstream bench runs", name, f.Workload)
		case f.Throughput <= 0 || f.Cores <= 0:
			t.Errorf("%s: throughput %v or cores %v not positive", name, f.Throughput, f.Cores)
		case !strings.Contains(f.Source, "http"):
			t.Errorf("%s: source without an address: %q", name, f.Source)
		case !strings.Contains(f.Hardware, "×"):
			t.Errorf("%s: hardware not stated as machines × cores: %q", name, f.Hardware)
		case !strings.Contains(f.Normalisation, "÷"):
			t.Errorf("%s: normalisation not spelled out: %q", name, f.Normalisation)
		}
		if f.StatedPerCore > 0 && math.Abs(f.PerCore()/f.StatedPerCore-1) > 0.001 {
			t.Errorf("%s: per core %.0f, the source states %.0f", name, f.PerCore(), f.StatedPerCore)
		}
	}
}

func TestFiguresBesideMeasured(t *testing.T) {
	measured := []harness.Figure{
		{Workload: "ysb-dict", Figure: "throughput", Value: 80e6, Unit: "events/s/core"},
		{Workload: "ysb-dict", Figure: "throughput", Value: 50e6, Unit: "events/s/core", Peer: "go-maps", Ratio: 1.6},
		{Workload: "nexmark-q5", Figure: "events/s", Value: 1e6, Unit: "events/s"},
		{Workload: "nexmark-q5", Figure: "events/s/core", Value: 221.4e3, Unit: "events/s/core"},
		{Workload: "flight", Figure: "throughput", Value: 1e9, Unit: "events/s/core"},
	}
	tests := []struct {
		workload string
		want     int // published figures expected beside it
	}{
		{"ysb-dict", 3},
		{"nexmark-q5", 1},
		{"nexmark-q0", 0}, // not run: nothing cited beside it
		{"flight", 0},     // nothing published for it
	}
	got := published.Figures(measured)
	for _, tc := range tests {
		n := 0
		for _, f := range got {
			if f.Workload != tc.workload {
				continue
			}
			n++
			if !f.Published || !strings.HasSuffix(f.Peer, "(published)") || f.Source == "" || f.Hardware == "" || f.Normalisation == "" {
				t.Errorf("%s: published figure not flagged and sourced: %+v", tc.workload, f)
			}
			if f.Unit != "events/s/core" || f.Value <= 0 || f.Ratio <= 0 {
				t.Errorf("%s: figure without per-core value or ratio: %+v", tc.workload, f)
			}
		}
		if n != tc.want {
			t.Errorf("%s: %d published figures, want %d", tc.workload, n, tc.want)
		}
	}
	for _, f := range got {
		if f.Workload == "nexmark-q5" && math.Abs(f.Ratio-10) > 0.01 {
			t.Errorf("nexmark-q5: ratio %v, want 221.4K / 22.14K = 10", f.Ratio)
		}
	}
}

// TestFiguresPerCPUSecond: a Nexmark figure (Flink's Cores column is
// measured CPU usage) stands beside our events per CPU-second when the run
// measured it, and beside events/s/core only when it did not; a YSB
// figure (cores allotted, not measured) always beside events/s/core.
func TestFiguresPerCPUSecond(t *testing.T) {
	measured := []harness.Figure{
		{Workload: "ysb-dict", Figure: "throughput", Value: 5e6, Unit: "events/s/core"},
		{Workload: "ysb-dict", Figure: "events/cpu-s", Value: 9e6, Unit: "events/s"},
		{Workload: "nexmark-q20", Figure: "events/s/core", Value: 116e3, Unit: "events/s/core"},
		{Workload: "nexmark-q20", Figure: "events/cpu-s", Value: 189.8e3, Unit: "events/s"},
		// The peer's events per CPU-second must not be taken for ours.
		{Workload: "nexmark-q20", Figure: "events/cpu-s", Value: 50e6, Unit: "events/s", Peer: "go-maps", Ratio: 0.004},
	}
	var sawQ20, sawYSB bool
	for _, f := range published.Figures(measured) {
		switch {
		case f.Workload == "nexmark-q20":
			sawQ20 = true
			// Flink q20: 100 M events ÷ 5267.805 CPU-seconds = 18983/s.
			if want := 189.8e3 / (100e6 / 5267.805); math.Abs(f.Ratio-want) > 0.01 {
				t.Errorf("nexmark-q20: ratio %v, want %v (events per CPU-second)", f.Ratio, want)
			}
			if !strings.Contains(f.Normalisation, "CPU-second") || !strings.Contains(f.Normalisation, "6.1x") {
				t.Errorf("nexmark-q20: normalisation does not name the basis and the per-core ratio: %q", f.Normalisation)
			}
		case f.Workload == "ysb-dict" && f.Peer == "flink (published)":
			sawYSB = true
			if math.Abs(f.Ratio-5) > 0.01 {
				t.Errorf("ysb-dict: ratio %v, want 5e6 / 1e6 = 5 (events/s/core: the chart's cores are allotted, not measured)", f.Ratio)
			}
		}
	}
	if !sawQ20 || !sawYSB {
		t.Fatalf("published figures missing: q20 %v, ysb %v", sawQ20, sawYSB)
	}
}
