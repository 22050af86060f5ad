// Package harness is the shared vocabulary of the benchmark workloads
// behind `arrowstream bench`: a workload runs against the real engine (and
// its peers, on the same data, in the same run) and reports figures.
package harness

import (
	"context"
	"log/slog"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Config is what every workload run receives.
type Config struct {
	// Quick asks for a run that, over all workloads, finishes within a
	// minute on 2 cores (smaller inputs, fewer repetitions).
	Quick bool
	// Seed makes generated data reproducible.
	Seed uint64
	// Mem is the allocator workloads build their data and run the engine
	// with.
	Mem memory.Allocator
	// Dir is a scratch directory (checkpoints, files) the workload may use.
	Dir string
	// Logger receives progress; never nil.
	Logger *slog.Logger
	// MemoryTarget, when positive, runs the engine under a soft memory
	// limit of the runtime's baseline plus MemoryTarget times the bytes
	// the query holds (internal/memtarget), set after every epoch by the
	// workloads that measure held bytes (StartMemoryFor); zero leaves the
	// runtime's defaults (GOGC=100, no limit).
	MemoryTarget float64
}

// Figure is one measured (or, for published peers, cited) value. Its JSON
// form is the line `arrowstream bench --json` prints.
type Figure struct {
	Workload string  `json:"workload"`
	Figure   string  `json:"figure"` // e.g. "events/s/core", "epoch_latency_p99", "peak_memory"
	Value    float64 `json:"value"`
	Unit     string  `json:"unit"`
	// Peer is empty for Arrowstream's own figure; otherwise who was
	// measured ("duckdb-1t", "go-maps", "flight-bare") or cited
	// ("spark-paper (published)").
	Peer string `json:"peer,omitempty"`
	// Ratio is Arrowstream's value divided by this peer's value for the
	// same figure, measured in the same run (higher is better for
	// throughput; for latencies the ratio is peer/ours so that > 1 still
	// means Arrowstream is better). Zero when not applicable.
	Ratio float64 `json:"ratio,omitempty"`
	// Published is true for figures cited from elsewhere, never measured
	// here; Source names where they come from (URL or title and the place
	// within it).
	Published bool   `json:"published,omitempty"`
	Source    string `json:"source,omitempty"`
	// Hardware (machines × cores) and Normalisation (the division that
	// makes the figure per core) accompany every published figure.
	Hardware      string `json:"hardware,omitempty"`
	Normalisation string `json:"normalisation,omitempty"`
}

// Workload is one named benchmark.
type Workload struct {
	Name        string
	Description string
	// Run measures the workload and its peers and returns the figures.
	// It must check every peer's answer against Arrowstream's before the
	// peer's time counts, and return an error naming the workload when
	// they disagree.
	Run func(ctx context.Context, cfg Config) ([]Figure, error)
}
