package ysb

import "github.com/arrowstream/arrowstream/bench/harness"

// PublishedFigure is a figure cited from elsewhere, normalised per core:
// never measured here, always shown apart and flagged Published.
type PublishedFigure struct {
	Workload string
	Peer     string
	// PerCore is the published throughput divided by the cores it used.
	PerCore float64
	Source  string
}

// Published lists the cited figures. The Spark entries are the Yahoo
// Streaming Benchmark throughputs of the Structured Streaming paper
// (Armbrust et al., "Structured Streaming: A Declarative API for Real-Time
// Applications in Apache Spark", SIGMOD 2018, §9.1): 65 M records/s for
// Structured Streaming, 33 M for Flink and 0.7 M for Kafka Streams on five
// c3.2xlarge workers (8 vCPUs each, 40 in all); the abstract's "2× Flink,
// 90× Kafka Streams" matches these ratios. The Flink Nexmark entry is
// Alibaba Cloud's Realtime Compute for Apache Flink white paper (q0–q2 at
// 4–6.5 M records/s on 8 CU, one CU being one core and 4 GiB).
var Published = []PublishedFigure{
	{Workload: "ysb-dict", Peer: "spark-structured-streaming (published)", PerCore: 65e6 / 40,
		Source: "Armbrust et al., SIGMOD 2018, §9.1: 65 M records/s on 5 × c3.2xlarge (40 vCPUs), in-framework data generation"},
	{Workload: "ysb-dict", Peer: "flink (published)", PerCore: 33e6 / 40,
		Source: "Armbrust et al., SIGMOD 2018, §9.1: Apache Flink 33 M records/s on the same 40 vCPUs"},
	{Workload: "ysb-dict", Peer: "kafka-streams (published)", PerCore: 0.7e6 / 40,
		Source: "Armbrust et al., SIGMOD 2018, §9.1: Kafka Streams 0.7 M records/s on the same 40 vCPUs"},
	{Workload: "nexmark-q0-q2", Peer: "flink-alibaba (published)", PerCore: 6.5e6 / 8,
		Source: "Alibaba Cloud, Realtime Compute for Apache Flink Nexmark white paper: q0–q2 4–6.5 M records/s on 8 CU (the upper figure)"},
}

// published returns the cited figures as harness figures; ratios are given
// against ours only for the YSB entries (the workloads are the same
// query; the hardware and setups are not, hence the label).
func published(ysbDict float64) []harness.Figure {
	var out []harness.Figure
	for _, p := range Published {
		f := harness.Figure{Workload: p.Workload, Figure: "throughput", Value: p.PerCore, Unit: "events/s/core",
			Peer: p.Peer, Published: true, Source: p.Source}
		if p.Workload == "ysb-dict" {
			f.Ratio = ratio(ysbDict, p.PerCore)
		}
		out = append(out, f)
	}
	return out
}
