package stream

// Setting keys shared by the session, the engine and the state store
// providers (session conf or query option).

// Keys of the settings frozen in the offset log: a restarted query takes
// them from its checkpoint, not from the new session.
const (
	ConfShufflePartitions = "spark.sql.shuffle.partitions"
	ConfWatermarkPolicy   = "spark.sql.streaming.multipleWatermarkPolicy"
	ConfStateProvider     = "spark.sql.streaming.stateStore.providerClass"
	ConfAggStateFormat    = "spark.sql.streaming.aggregation.stateFormatVersion"
	// ConfStatePartitioning is how stateful operators assign a key to one
	// of their spark.sql.shuffle.partitions state partitions:
	// PartitioningMurmur3 (Spark's, for every new query) or
	// PartitioningKeyEncoder (checkpoints written before it existed, which
	// do not record the key and keep their scheme).
	ConfStatePartitioning = "stateStore.partitioning"
	// ConfShareStatefulSubplans: "true" (every new query) runs a stateful
	// subplan that the plan reads twice (a CTE or view read by both sides
	// of a join) once per epoch for all its readers, with one state;
	// "false" runs each copy with its own state, as Spark does. A
	// checkpoint that does not record it was written before it existed
	// and keeps running every copy.
	ConfShareStatefulSubplans = "arrowstream.streaming.shareStatefulSubplans"
	// ConfPruneStreamJoinInputs: "true" (every new query) gives each input
	// of a stream-stream join only the columns read at or above the join,
	// so that its state holds no column that only a filter below it read
	// (Spark's plan); "false" keeps those columns. A checkpoint that does
	// not record it was written before inputs were pruned, with those
	// columns in its state's schema, and keeps them.
	ConfPruneStreamJoinInputs = "arrowstream.streaming.pruneStreamJoinInputs"
)

// Values of ConfStatePartitioning.
const (
	// PartitioningMurmur3 is Spark's HashPartitioning of the key columns:
	// pmod(hash(keys...), numPartitions), hash being Murmur3 with seed 42.
	PartitioningMurmur3 = "murmur3"
	// PartitioningKeyEncoder is the scheme before PartitioningMurmur3: the
	// key's vector.KeyEncoder hash modulo numPartitions.
	PartitioningKeyEncoder = "keyEncoder"
)

// Settings of the state store (session conf or query option; recorded in
// the offset log with the other settings that shape state).
const (
	// ConfStateStoreProvider selects the state store: "memory" (default)
	// or "pebble". A checkpoint keeps the provider it was started with.
	ConfStateStoreProvider = "stateStore.provider"
	// ConfPebbleBlockCacheBytes is the block cache shared by every state
	// partition of a query (pebble provider; default 64 MiB).
	ConfPebbleBlockCacheBytes = "stateStore.pebble.blockCacheBytes"
	// ConfPebbleMemtableBytes is each partition's memtable size (pebble
	// provider; default 4 MiB).
	ConfPebbleMemtableBytes = "stateStore.pebble.memtableBytes"
	// ConfPebbleLocalDir holds the working Pebble directories (pebble
	// provider; default: inside each partition's checkpoint directory).
	ConfPebbleLocalDir = "stateStore.pebble.localDir"
	// ConfPebbleChangelog is changelog checkpointing (pebble provider;
	// default true): versions between snapshots write only their changes;
	// false flushes and copies SST files at every version.
	ConfPebbleChangelog = "stateStore.pebble.changelogCheckpointing"
	// ConfPebbleMinDeltasForSnapshot: with changelog checkpointing, every
	// this-many-th version is a snapshot (default 10).
	ConfPebbleMinDeltasForSnapshot = "stateStore.pebble.minDeltasForSnapshot"
	// ConfPebbleLiveStateBytes bounds the Go-heap bytes of the groups a
	// streaming aggregation keeps in memory between epochs (pebble
	// provider; default DefaultPebbleLiveStateBytes): the other groups
	// live only in Pebble and are read back when an epoch touches them.
	ConfPebbleLiveStateBytes = "stateStore.pebble.liveStateBytes"
)

// DefaultPebbleLiveStateBytes is ConfPebbleLiveStateBytes's default.
const DefaultPebbleLiveStateBytes = 64 << 20

// StateTuningKeys are the state store settings that do not shape the
// state: a restarted query may change them.
func StateTuningKeys() []string {
	return []string{ConfPebbleBlockCacheBytes, ConfPebbleMemtableBytes, ConfPebbleLocalDir, ConfPebbleChangelog, ConfPebbleMinDeltasForSnapshot, ConfPebbleLiveStateBytes}
}

// ConfClusterStatefulStableMembership is accepted and has no effect: it
// acknowledged that a stateful streaming table with an event-time
// watermark ran in cluster mode with stable membership, while such a
// table could lose rows of a window when hop partitions moved. The
// downstream watermark now waits until the hop's rows are consumed
// (docs/cluster.md), so no acknowledgement is needed; scripts that still
// set it keep working.
const ConfClusterStatefulStableMembership = "arrowstream.cluster.stateful.stableMembership"

// ConfClusterStatePartitionKeys, set by cluster mode on the downstream
// stage of a repartition hop, lists the positions (comma-separated, among
// the stateful operator's key columns) that its state partitioning
// hashes: those the hop hashes (a window computed after the hop is not),
// so that state partition p holds exactly the keys of hop partition p and
// moves with it between instances. Absent: every key column.
const ConfClusterStatePartitionKeys = "arrowstream.cluster.statePartitionKeys"
