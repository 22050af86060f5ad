package stateful

import (
	"fmt"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/vector"
)

// partitioning is how a stateful operator assigns a key to one of its
// state partitions; it is the one place that decides it. The scheme is
// frozen in the checkpoint (stream.ConfStatePartitioning in the offset
// log's conf), because state written under one scheme cannot be found
// under another.
type partitioning uint8

const (
	// partitionKeyEncoder: the key's vector.KeyEncoder hash modulo the
	// number of partitions (checkpoints that predate the setting).
	partitionKeyEncoder partitioning = iota
	// partitionMurmur3 is Spark's HashPartitioning: pmod(hash(key
	// columns), n) with Spark's Murmur3 hash (seed 42), so that the order
	// in which partitions hand rows on (a limit after a deduplication,
	// first() after a shuffle) is Spark's.
	partitionMurmur3
)

// partitioningOf reads the scheme from a query's effective settings.
// Absent, it is the key-encoder one: the engine sets the setting for
// every run, and an operator run outside it keeps the older behaviour.
func partitioningOf(conf map[string]string) (partitioning, error) {
	switch v := conf[stream.ConfStatePartitioning]; v {
	case "", stream.PartitioningKeyEncoder:
		return partitionKeyEncoder, nil
	case stream.PartitioningMurmur3:
		return partitionMurmur3, nil
	default:
		return 0, fmt.Errorf("arrowstream: %s = %q: unknown state partitioning (known: %s, %s)",
			stream.ConfStatePartitioning, v, stream.PartitioningMurmur3, stream.PartitioningKeyEncoder)
	}
}

// hash returns the partitioning hash of row i of c's last encode: under
// Murmur3 Spark's hash of the key columns as an unsigned 32-bit value (a
// key of types Spark's hash does not take keeps the key-encoder hash).
// The empty key (a global aggregation) hashes to 0, so it lives in
// partition 0 under both schemes, as Spark's single-partition state.
func (p partitioning) hash(c *rowCodec, i int) uint64 {
	if p == partitionMurmur3 && c.sparkHashable {
		if len(c.cols) == 0 {
			return 0
		}
		return uint64(uint32(c.sparkHash(i)))
	}
	return c.hash(i)
}

// partition maps a partitioning hash to one of n partitions: Spark's
// pmod(hash, n) of the signed 32-bit hash under Murmur3.
func (p partitioning) partition(h uint64, n int) int {
	if n <= 1 {
		return 0
	}
	if p == partitionMurmur3 {
		r := int64(int32(uint32(h))) % int64(n)
		if r < 0 {
			r += int64(n)
		}
		return int(r)
	}
	return int(h % uint64(n))
}

// of is the partition of row i of c's last encode among n.
func (p partitioning) of(c *rowCodec, i, n int) int { return p.partition(p.hash(c, i), n) }

// ofGroup is the partition among n of key j of keys, encoded from a live
// aggregation's words as c would encode it (encodeNewKeys): hash's
// choice, from the hashes keys holds.
func (p partitioning) ofGroup(c *rowCodec, keys *vector.GroupKeys, j, n int) int {
	if p == partitionMurmur3 && c.sparkHashable {
		if c.hashKeys != nil && len(c.hashKeys) == 0 {
			return p.partition(0, n) // no hashed key: as sparkHash
		}
		return p.partition(uint64(uint32(keys.SparkHash(j))), n)
	}
	return p.partition(keys.Hash(j), n)
}
