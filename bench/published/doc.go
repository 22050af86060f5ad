// Package published holds the throughput figures other engines' authors
// have published for the workloads `arrowstream bench` runs (the Yahoo
// Streaming Benchmark and Nexmark), each with where it was published, the
// hardware it ran on and how it is normalised per core.
//
// These figures are cited, never measured here: other machines, other
// setups (distributed clusters, Kafka or in-framework generators,
// checkpointing), other years. Figures turns them into harness figures
// flagged Published, with Hardware and Normalisation filled in, so that
// the bench command lists them in their own table beside the run's own
// figures and never mixes them with the measured ones.
//
// A figure is listed only when its source states both the throughput and
// the hardware precisely enough to divide by a number of cores; docs/
// performance.md says which published claims were left out and why.
package published
