package published

import "fmt"

// Sources, cited once.
const (
	databricksJune2017 = "Databricks blog, \"Making Apache Spark the Fastest Open Source Streaming Engine\", 2017-06-06, " +
		"https://www.databricks.com/blog/2017/06/06/simple-super-fast-streaming-engine-apache-spark.html, " +
		"the Yahoo Streaming Benchmark throughput chart and the setup stated beneath it"
	databricksOct2017 = "Databricks blog, \"Benchmarking Structured Streaming on Databricks Runtime Against State-of-the-Art Streaming Systems\", 2017-10-11 (updated 2017-12-14), " +
		"https://www.databricks.com/blog/2017/10/11/benchmarking-structured-streaming-on-databricks-runtime-against-state-of-the-art-streaming-systems.html, " +
		"section \"Apache Spark vs. Flink vs. Kafka Results\", the single-core chart"
	nexmarkREADME = "nexmark/nexmark README.md (https://github.com/nexmark/nexmark, commit 0c6d9cf), " +
		"section \"Nexmark Benchmark Result\", table \"Benchmark Results\" (Flink 1.13, 100 M events per query)"
	alibabaNexmark = "Alibaba Cloud, Realtime Compute for Apache Flink, \"Performance white paper: Nexmark benchmark\", " +
		"https://www.alibabacloud.com/help/en/flink/realtime-flink/support/nexmark-performance-testing, " +
		"section \"Performance at a glance\"; CU defined in \"Basic concepts\", https://alibabacloud.com/help/en/flink/product-overview/basic-concepts"
)

// nexmarkHardware is what the nexmark README states about its machines
// and Flink's configuration.
const nexmarkHardware = "3 worker machines × 8 cores, 32 GB RAM each (the README's \"Machines\" section); " +
	"8 TaskManagers × 1 slot, parallelism 8; the Cores column is the workers' measured CPU usage " +
	"(the README's \"Metrics\" section: a CPU usage collector on every worker node), so Throughput/Cores is events per CPU-second"

// All returns every published figure, YSB first, then Nexmark by query.
func All() []Figure {
	figs := []Figure{
		{
			Engine: "spark-structured-streaming", Workload: "ysb-dict",
			Query:      "Yahoo Streaming Benchmark, data generated in the framework (not read from Kafka), Spark 2.2.0-RC3",
			Throughput: 65e6, Cores: 40,
			Hardware:      "10 × AWS r3.xlarge (4 vCPUs each) = 40 cores",
			Normalisation: divide("65 M", "40", 65e6/40),
			Source:        databricksJune2017,
			Caveat:        "≈65 M is read from the bar chart; the text states the setup and \"5x or better\" than the other engines",
		},
		{
			Engine: "spark-structured-streaming", Workload: "ysb-dict",
			Query:      "Yahoo Streaming Benchmark on a single core, Databricks Runtime",
			Throughput: 2.5e6, Cores: 1,
			Hardware:      "1 machine × 1 core (Databricks Community Edition; instance type not stated)",
			Normalisation: divide("2.5 M", "1", 2.5e6),
			Source:        databricksOct2017,
			Caveat:        "≈2.5 M is read from the chart; the text states Spark 1.5× Flink's 1-ad-per-campaign run",
		},
		{
			Engine: "flink", Workload: "ysb-dict",
			Query:      "Yahoo Streaming Benchmark on a single core, 10 ads per campaign (the benchmark's definition)",
			Throughput: 1.0e6, Cores: 1,
			Hardware:      "1 machine × 1 core (Databricks Community Edition; instance type not stated)",
			Normalisation: divide("1.0 M", "1", 1.0e6),
			Source:        databricksOct2017,
			Caveat:        "≈1.0 M is read from the chart; with 1 ad per campaign the same chart shows ≈1.65 M",
		},
	}
	for _, q := range []struct {
		name                  string
		cores, secs, coreSecs float64
		statedPerCore         float64
	}{
		{"q0", 8.45, 76.323, 645.087, 155.02e3},
		{"q1", 8.26, 76.643, 633.165, 157.94e3},
		{"q2", 8.23, 69.309, 570.736, 175.21e3},
		{"q3", 8.59, 76.531, 657.384, 152.12e3},
		{"q4", 12.85, 226.605, 2912.841, 34.33e3},
		{"q5", 10.8, 418.242, 4516.930, 22.14e3},
		{"q7", 14.21, 570.983, 8112.884, 12.33e3},
		{"q8", 9.42, 72.673, 684.288, 146.14e3},
		{"q9", 16.11, 435.882, 7022.197, 14.24e3},
		{"q11", 10.6, 237.599, 2518.946, 39.7e3},
		{"q13", 8.24, 92.839, 764.952, 130.73e3},
		{"q15", 8.73, 158.224, 1380.927, 72.42e3},
		{"q16", 11.51, 466.008, 5362.602, 18.65e3},
		{"q17", 9.24, 92.666, 856.162, 116.8e3},
		{"q18", 12.49, 149.076, 1862.171, 53.7e3},
		{"q19", 21.38, 106.190, 2270.551, 44.04e3},
		{"q20", 17.27, 305.099, 5267.805, 18.98e3},
		{"q21", 8.33, 121.845, 1015.293, 98.49e3},
		{"q22", 8.25, 93.244, 769.471, 129.96e3},
	} {
		figs = append(figs, Figure{
			Engine: "flink", Workload: "nexmark-" + q.name,
			Query: "Nexmark " + q.name + " in Flink SQL, 100 M events from the in-job generator " +
				"(92 % bids, 6 % auctions, 2 % persons), blackhole sink, RocksDB state, exactly-once checkpoints every 3 minutes",
			Throughput: 100e6 / q.secs, Cores: q.coreSecs / q.secs, StatedPerCore: q.statedPerCore,
			Hardware: nexmarkHardware, PerCPUSecond: true,
			Normalisation: fmt.Sprintf("100 M events ÷ %.3f core-seconds (Cores %.2f × Time %.3f s) = %.0f events/s per core, the README's Throughput/Cores column",
				q.coreSecs, q.cores, q.secs, 100e6/q.coreSecs),
			Source: nexmarkREADME,
		})
	}
	// The white paper gives one range for q0, q1 and q2 together; its
	// upper end stands beside each of them, so that the ratio to ours is
	// the smallest it can be.
	for _, q := range []string{"q0", "q1", "q2"} {
		figs = append(figs, Figure{
			Engine: "flink-alibaba-vvr", Workload: "nexmark-" + q,
			Query:      "Nexmark q0, q1 and q2 on Alibaba's commercial Flink engine, 100 M input records, blackhole sink: \"4 to 6.5 million\" records/s",
			Throughput: 6.5e6, Cores: 8,
			Hardware:      "8 CU × (1 CPU core + 4 GiB) = 8 cores of the managed service (machines not stated)",
			Normalisation: divide("6.5 M (upper end of the 4–6.5 M range)", "8", 6.5e6/8),
			Source:        alibabaNexmark,
			Caveat:        "the page does not say which of q0–q2 reaches which end of the range; the upper end is used for each",
		})
	}
	return figs
}
