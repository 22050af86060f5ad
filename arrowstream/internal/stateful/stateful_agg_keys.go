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
// bytes, so that keep does not grow anything key by key. The arena at
// least doubles when it grows: slices.Grow (append's growth) adds only a
// quarter past 256 bytes, and a windowed aggregation whose state grows by
// one epoch's new keys at a time reallocated and copied its whole arena
// nearly every epoch (q8: ten copies of an arena growing to 115 KB in a
// 20-epoch run, each of fresh memory).
func (k *storeKeys) reserve(groups, bytes int) {
	k.keyStart, k.keyEnd = growTo(k.keyStart, groups), growTo(k.keyEnd, groups)
	k.arena = growCap(k.arena, len(k.arena)+bytes)
}

// growCap returns s with room for need elements: s itself when it has it,
// else a copy with at least twice s's capacity, so that a buffer grown by
// successive reservations is copied O(log n) times.
func growCap[T any](s []T, need int) []T {
	if need <= cap(s) {
		return s
	}
	return slices.Grow(s, max(need, 2*cap(s))-len(s))
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
// every old one, -1 for a dropped group; the kept groups in their old
// order, so new ids never pass old ones) so that the arena holds only the
// kept groups' keys. It moves them down in place, arena and bounds, when
// the arena holds the keys in id order, as a state grown by its epochs
// does (each epoch keeps its new groups' keys, in id order, after the
// ones before): a windowed aggregation renumbers about every epoch, and a
// fresh arena each time, half the size and grown again by the next
// epoch's keys, was a copy of every key twice. Otherwise (keys kept in
// another order, as after a restart) into a fresh arena.
func (k *storeKeys) remap(remap []int32, groups int) {
	if !k.inIDOrder(remap) {
		k.remapFresh(remap, groups)
		return
	}
	end := uint32(0) // the arena's bytes kept so far
	for old, g := range remap {
		if g < 0 || int(g) >= len(k.keyEnd) {
			continue
		}
		if old >= len(k.keyEnd) { // not kept
			k.keyStart[g], k.keyEnd[g] = 0, 0
			continue
		}
		s, e := k.keyStart[old], k.keyEnd[old]
		if e == 0 {
			k.keyStart[g], k.keyEnd[g] = 0, 0
			continue
		}
		copy(k.arena[end:], k.arena[s:e])
		k.keyStart[g], k.keyEnd[g] = end, end+e-s
		end += e - s
	}
	k.arena = k.arena[:end]
	k.keyStart = cutTo(k.keyStart, groups)
	k.keyEnd = cutTo(k.keyEnd, groups)
}

// inIDOrder reports whether the kept keys of the groups remap keeps lie
// in the arena in id order, so that remap can move them down in place.
func (k *storeKeys) inIDOrder(remap []int32) bool {
	last := uint32(0)
	for old := range min(len(remap), len(k.keyEnd)) {
		if remap[old] < 0 || k.keyEnd[old] == 0 {
			continue
		}
		if k.keyStart[old] < last {
			return false
		}
		last = k.keyEnd[old]
	}
	return true
}

// remapFresh is remap into a new arena.
func (k *storeKeys) remapFresh(remap []int32, groups int) {
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

// cutTo makes s n elements long: cut, the elements past n zeroed (a
// later growTo extends from zero), or extended with zeros.
func cutTo[T any](s []T, n int) []T {
	if n >= len(s) {
		return growTo(s, n)
	}
	clear(s[n:])
	return s[:n]
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
