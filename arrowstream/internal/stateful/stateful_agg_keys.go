package stateful

import (
	"math"
	"slices"
)

// Store keys kept with the live groups. A streaming aggregation logs a
// group's key each time the group changes and again when it is evicted;
// the key's bytes (the stores' row encoding) and its partition are
// functions of the key alone, and a live group's key never changes until
// Compact renumbers the groups (a deleted group whose key comes back
// takes its old id). So the first logged change of a group keeps its
// encoded key and partition, and later changes and the eviction log them
// from there: an epoch whose changed groups are all known encodes no key,
// and eviction neither rebuilds the evicted groups' key columns for the
// stores nor encodes and hashes them again (the Go peer's map holds its
// key once, too).
//
// The partitions are valid for one partitioning (scheme, partition count,
// hashed key positions): when an epoch's differs, they are forgotten and
// noted again as groups change.

// partKey identifies the partitioning that the noted partitions follow.
type partKey struct {
	scheme  partitioning
	n       int
	hashAll bool  // the hash takes every key column
	hashed  []int // else the positions it takes
}

func (k partKey) equal(o partKey) bool {
	return k.scheme == o.scheme && k.n == o.n && k.hashAll == o.hashAll && slices.Equal(k.hashed, o.hashed)
}

// storeKeys holds, by group, its encoded store key: keyStart[g] and
// keyEnd[g] bound it in arena (keyEnd 0: not kept).
type storeKeys struct {
	arena    []byte
	keyStart []uint32
	keyEnd   []uint32
}

// reserve makes room for the keys of groups ids and about bytes more key
// bytes, so that keep does not grow anything key by key.
func (k *storeKeys) reserve(groups, bytes int) {
	k.keyStart, k.keyEnd = growTo(k.keyStart, groups), growTo(k.keyEnd, groups)
	k.arena = slices.Grow(k.arena, bytes)
}

// keep records key as group g's (copied; ignored once the arena would
// pass 4 GiB: the key is then encoded when needed, as without the cache).
// reserve(groups > g) came first.
func (k *storeKeys) keep(g int32, key []byte) {
	if len(key) == 0 || len(k.arena)+len(key) > math.MaxUint32 {
		return
	}
	if k.keyEnd[g] != 0 {
		return // kept already: the same key
	}
	k.keyStart[g] = uint32(len(k.arena))
	k.arena = append(k.arena, key...)
	k.keyEnd[g] = uint32(len(k.arena))
}

// of returns group g's kept key (a view into the arena) or nil.
func (k *storeKeys) of(g int32) []byte {
	if int(g) >= len(k.keyEnd) || k.keyEnd[g] == 0 {
		return nil
	}
	return k.arena[k.keyStart[g]:k.keyEnd[g]]
}

// remap carries the kept keys over a renumbering (remap: the new id of
// every old one, -1 for a dropped group) into a new arena that holds only
// the kept groups' keys.
func (k *storeKeys) remap(remap []int32, groups int) {
	arena := make([]byte, 0, len(k.arena)/2)
	start, end := make([]uint32, groups), make([]uint32, groups)
	for old, g := range remap {
		if g < 0 || old >= len(k.keyEnd) || k.keyEnd[old] == 0 {
			continue
		}
		start[g] = uint32(len(arena))
		arena = append(arena, k.arena[k.keyStart[old]:k.keyEnd[old]]...)
		end[g] = uint32(len(arena))
	}
	k.arena, k.keyStart, k.keyEnd = arena, start, end
}

// bytes is the Go-heap memory of the kept keys.
func (k *storeKeys) bytes() int64 {
	return int64(cap(k.arena)) + int64(cap(k.keyStart))*4 + int64(cap(k.keyEnd))*4
}

// partitionsFor forgets the noted partitions when the epoch's
// partitioning is not the one they were noted under.
func (l *aggLive) partitionsFor(key partKey) {
	if l.partsUnder.equal(key) {
		return
	}
	clear(l.partOf)
	key.hashed = slices.Clone(key.hashed)
	l.partsUnder = key
}

// storedKey returns group g's store key and partition when both are
// known, for the partitioning of the epoch (partitionsFor).
func (l *aggLive) storedKey(g int32) ([]byte, int, bool) {
	if int(g) >= len(l.partOf) || l.partOf[g] == 0 {
		return nil, 0, false
	}
	key := l.keys.of(g)
	if key == nil {
		return nil, 0, false
	}
	return key, int(l.partOf[g]) - 1, true
}

// allStored reports whether every group of gids has a known store key
// and partition.
func (l *aggLive) allStored(gids []int32) bool {
	for _, g := range gids {
		if _, _, ok := l.storedKey(g); !ok {
			return false
		}
	}
	return true
}

// partitionKey is the epoch's partitioning of the aggregation's keys.
func (s *statefulAggregate) partitionKey() partKey {
	return partKey{scheme: s.state.scheme, n: len(s.state.stores), hashAll: s.keyCodec.hashKeys == nil, hashed: s.keyCodec.hashKeys}
}
