package published

import (
	"fmt"

	"github.com/arrowstream/arrowstream/bench/harness"
)

// Figure is one published throughput.
type Figure struct {
	// Engine is who published it ("flink", "spark-structured-streaming").
	Engine string
	// Workload is the workload of `arrowstream bench` it stands beside
	// ("ysb-dict", "nexmark-q5").
	Workload string
	// Query says what the source measured, in its own terms.
	Query string
	// Throughput is the published rate in records (events) per second of
	// the whole setup, and Cores the cores it used; PerCore divides them.
	Throughput float64
	Cores      float64
	// StatedPerCore is the per-core figure when the source itself states
	// one (0 otherwise); the tests hold PerCore to it.
	StatedPerCore float64
	// Hardware is the machines × cores, as the source states them.
	Hardware string
	// Normalisation spells out the division behind PerCore.
	Normalisation string
	// Source is where it was published: URL or title, and the section,
	// table or chart within it.
	Source string
	// Caveat says what makes the figure approximate or not like-for-like.
	Caveat string
	// PerCPUSecond is true when Cores is the CPU the setup was measured to
	// use (the Nexmark README's Cores column: a CPU usage collector on
	// every worker), so that PerCore is events per CPU-second. Such a
	// figure stands beside our own events per CPU-second (getrusage), not
	// beside our wall-clock rate divided by GOMAXPROCS, which counts idle
	// and waiting cores as used.
	PerCPUSecond bool
}

// PerCore is the published throughput divided by the cores it used.
func (f Figure) PerCore() float64 {
	if f.Cores <= 0 {
		return 0
	}
	return f.Throughput / f.Cores
}

// Peer is the name the figure carries in the bench output: the engine,
// marked as published.
func (f Figure) Peer() string { return f.Engine + " (published)" }

// Figures returns the published figures that stand beside the workloads
// present in measured, as harness figures in events/s/core flagged
// Published. Each carries the ratio of the run's own throughput for that
// workload to the published one, on the published figure's basis: our
// events per CPU-second (getrusage) beside a figure per measured
// CPU-second (PerCPUSecond), our events/s/core beside a figure per
// allotted core; the Normalisation says which, and for a per-CPU-second
// figure also gives the ratio by events/s/core. The ratio compares
// different hardware and setups, which the label and the Source say.
func Figures(measured []harness.Figure) []harness.Figure {
	ours := map[string]float64{}
	oursCPU := map[string]float64{}
	for _, f := range measured {
		if f.Published || f.Peer != "" {
			continue
		}
		switch {
		case f.Unit == "events/s/core" && (f.Figure == "throughput" || f.Figure == "events/s/core"):
			ours[f.Workload] = f.Value
		case f.Figure == "events/cpu-s":
			oursCPU[f.Workload] = f.Value
		}
	}
	var out []harness.Figure
	for _, p := range All() {
		v, ok := ours[p.Workload]
		if !ok {
			continue
		}
		hf := harness.Figure{
			Workload: p.Workload, Figure: "throughput", Value: p.PerCore(), Unit: "events/s/core",
			Peer: p.Peer(), Published: true,
			Source:        p.Query + ". " + p.Source,
			Hardware:      p.Hardware,
			Normalisation: p.Normalisation,
		}
		if p.Caveat != "" {
			hf.Source += " (" + p.Caveat + ")"
		}
		pc := p.PerCore()
		switch cpu := oursCPU[p.Workload]; {
		case pc <= 0:
		case p.PerCPUSecond && cpu > 0:
			hf.Ratio = cpu / pc
			hf.Normalisation += fmt.Sprintf("; compared with our %.0f events per CPU-second (getrusage, all threads)", cpu)
			if v > 0 {
				hf.Normalisation += fmt.Sprintf(" (by our events/s ÷ GOMAXPROCS, %.0f, the ratio would be %.1fx)", v, v/pc)
			}
		case v > 0:
			hf.Ratio = v / pc
			hf.Normalisation += fmt.Sprintf("; compared with our events/s ÷ GOMAXPROCS (%.0f)", v)
		}
		out = append(out, hf)
	}
	return out
}

// divide spells out a normalisation "records/s ÷ cores = per core".
func divide(records, cores string, perCore float64) string {
	return fmt.Sprintf("%s records/s ÷ %s cores = %.0f records/s per core", records, cores, perCore)
}
