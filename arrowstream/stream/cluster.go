package stream

// PartitionedSource is a source whose instances in a cluster read
// disjoint parts of its data (the Kafka source in cluster mode reads the
// partitions its table's consumer group assigns). A session in cluster
// mode refuses every other streaming source: each instance would read all
// of it, and the union of the instances' tables would hold it as many
// times as there are instances.
type PartitionedSource interface {
	ClusterPartitioned() bool
}
