package stream

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// PartitionedSource is a source whose instances in a cluster read
// disjoint parts of its data (the Kafka source in cluster mode reads the
// partitions its table's consumer group assigns). A session in cluster
// mode refuses every other streaming source: each instance would read all
// of it, and the union of the instances' tables would hold it as many
// times as there are instances.
type PartitionedSource interface {
	ClusterPartitioned() bool
}

// Repartitioner moves keyed rows between the instances of a cluster (a
// repartition hop, docs/cluster.md): a stateful streaming query whose key
// is not the input's partitioning is cut below its stateful operator; the
// upstream stage writes its rows, hashed on the key, through HopSink, and
// the downstream stage reads the partitions assigned to this instance
// through HopSource. The Kafka package implements it with an internal
// topic per hop.
type Repartitioner interface {
	// HopSink returns the upstream stage's sink for hop spec.
	HopSink(mem memory.Allocator, spec HopSpec) (Sink, error)
	// HopSource returns the downstream stage's source for hop spec.
	HopSource(mem memory.Allocator, spec HopSpec) (Source, error)
}

// HopSpec describes one repartition hop of a streaming table.
type HopSpec struct {
	// Table is the streaming table (query) the hop belongs to.
	Table string
	// Hop numbers the hops of the table (0 for the first).
	Hop int
	// Schema is the schema of the rows that cross the hop.
	Schema *arrow.Schema
	// KeyColumns are the ordinals in Schema that the rows are hashed on
	// (Spark's HashPartitioning: pmod(hash(keys), Partitions)).
	KeyColumns []int
	// Partitions is the number of partitions of the hop
	// (spark.sql.shuffle.partitions).
	Partitions int
	// EventTimeColumn is the ordinal of the event-time column (a
	// timestamp) whose largest value the upstream stage's watermark
	// markers carry, or -1.
	EventTimeColumn int
	// CheckpointDir is the checkpoint directory of the stage the sink or
	// source is created for (the writer's id lives there).
	CheckpointDir string
}

// ClusterTableSource is a cluster-partitioned source whose consumer group
// can be named after a table other than its query's checkpoint directory
// (the upstream stage of a repartition hop runs under the table's
// checkpoint but reads as the table).
type ClusterTableSource interface {
	SetClusterTable(table string)
}

// EventTimeSource is a source that knows how far in event time the
// writers of its input have got: the downstream stage of a repartition
// hop, whose upstream writers send watermark markers. EventTimeMaxMs
// returns the smallest, over the writers that are not idle, of the
// largest event time (milliseconds) each has sent, and false when no
// writer is active. The query's watermark nodes then take it in place of
// the largest event time of the rows they saw (each instance sees only
// its own partitions' rows; the markers carry everyone's progress).
type EventTimeSource interface {
	EventTimeMaxMs() (ms int64, ok bool)
}
