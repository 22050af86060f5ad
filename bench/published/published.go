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
// Published. Each carries the ratio of the run's own per-core throughput
// for that workload to the published one; the ratio compares different
// hardware and setups, which the label and the Source say.
func Figures(measured []harness.Figure) []harness.Figure {
	ours := map[string]float64{}
	for _, f := range measured {
		if f.Published || f.Peer != "" || f.Unit != "events/s/core" {
			continue
		}
		if f.Figure == "throughput" || f.Figure == "events/s/core" {
			ours[f.Workload] = f.Value
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
		if pc := p.PerCore(); pc > 0 && v > 0 {
			hf.Ratio = v / pc
		}
		out = append(out, hf)
	}
	return out
}

// divide spells out a normalisation "records/s ÷ cores = per core".
func divide(records, cores string, perCore float64) string {
	return fmt.Sprintf("%s records/s ÷ %s cores = %.0f records/s per core", records, cores, perCore)
}
