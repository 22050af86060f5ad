package stateful

import (
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
// keyEnd[g] bound it in the arena (keyEnd 0: not kept). The arena is a
// list of chunks, each filled up to a capacity fixed when it is made; a
// key lies in one chunk, and a position is the chunk's number shifted by
// keyChunkBits plus the offset in it. It grows by a chunk twice the last
// one's size and never copies a kept key: a growing arena reallocated and
// copied was, on this engine's VMs, mostly the page faults of its fresh
// copy (q8: 0.11 of 1.46 s of runTrigger), and a key handed out stays
// where it is until the next remap.
type storeKeys struct {
	chunks   [][]byte // cap fixed at make; the ones past cur are empty
	cur      int      // the chunk being filled (chunks empty: none)
	keyStart []uint32
	keyEnd   []uint32
}

const (
	keyChunkBits = 20 // a chunk holds at most 1 MiB
	keyChunkMax  = 1 << keyChunkBits
	keyChunkMin  = 4 << 10
	// positions are uint32, and a key's end may be its chunk's end: the
	// last chunk number is left out so that no end wraps to 0 (not kept)
	keyChunks = 1<<(32-keyChunkBits) - 1
)

// reserve makes room for the keys of groups ids and about bytes more key
// bytes, so that keep does not grow anything key by key: when the chunk
// being filled has less room, the next one is made with room for them
// (up to a chunk's maximum), at least twice the size of the last.
func (k *storeKeys) reserve(groups, bytes int) {
	k.keyStart, k.keyEnd = growTo(k.keyStart, groups), growTo(k.keyEnd, groups)
	if len(k.chunks) == 0 || k.room() >= bytes || k.cur+1 < len(k.chunks) {
		if len(k.chunks) == 0 && bytes > 0 {
			k.addChunk(bytes)
		}
		return
	}
	k.addChunk(bytes)
}

// room is the free bytes of the chunk being filled.
func (k *storeKeys) room() int {
	c := k.chunks[k.cur]
	return cap(c) - len(c)
}

// addChunk appends an empty chunk of room for at least need bytes (up to
// keyChunkMax), twice the last chunk's size or more; false when the
// positions are used up.
func (k *storeKeys) addChunk(need int) bool {
	if len(k.chunks) >= keyChunks {
		return false
	}
	size := keyChunkMin
	if n := len(k.chunks); n > 0 {
		size = 2 * cap(k.chunks[n-1])
	}
	size = min(max(size, need), keyChunkMax)
	k.chunks = append(k.chunks, make([]byte, 0, size))
	return true
}

// keep records key as group g's (copied; ignored when it is longer than
// a chunk or the arena's positions are used up: the key is then encoded
// when needed, as without the cache). reserve(groups > g) came first.
func (k *storeKeys) keep(g int32, key []byte) {
	if len(key) == 0 || len(key) > keyChunkMax {
		return
	}
	if k.keyEnd[g] != 0 {
		return // kept already: the same key
	}
	if len(k.chunks) == 0 && !k.addChunk(len(key)) {
		return
	}
	for k.room() < len(key) {
		if k.cur+1 == len(k.chunks) && !k.addChunk(len(key)) {
			return
		}
		k.cur++
	}
	c := k.chunks[k.cur]
	pos := uint32(k.cur)<<keyChunkBits | uint32(len(c))
	k.chunks[k.cur] = append(c, key...)
	k.keyStart[g], k.keyEnd[g] = pos, pos+uint32(len(key))
}

// of returns group g's kept key (a view into the arena) or nil.
func (k *storeKeys) of(g int32) []byte {
	if int(g) >= len(k.keyEnd) || k.keyEnd[g] == 0 {
		return nil
	}
	s := k.keyStart[g]
	off := int(s & (keyChunkMax - 1))
	return k.chunks[s>>keyChunkBits][off : off+int(k.keyEnd[g]-s)]
}

// held is the bytes the chunks hold (kept keys; no chunk's unused tail).
func (k *storeKeys) held() int {
	n := 0
	for _, c := range k.chunks {
		n += len(c)
	}
	return n
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
//
// In place, the keys are packed again by keep's rule (the next chunk
// when a key does not fit the rest of one) into the same chunks; a key
// never moves up: packing a subsequence of the keys by the rule that
// placed them all puts each at or before its old position.
func (k *storeKeys) remap(remap []int32, groups int) {
	if !k.inIDOrder(remap) {
		k.remapFresh(remap, groups)
		return
	}
	wc, woff := 0, 0 // the write position: chunk and offset
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
		n := int(e - s)
		for woff+n > cap(k.chunks[wc]) {
			k.chunks[wc] = k.chunks[wc][:woff] // its kept keys end here
			wc, woff = wc+1, 0
		}
		src := k.chunks[s>>keyChunkBits]
		roff := int(s & (keyChunkMax - 1))
		dst := k.chunks[wc][:max(len(k.chunks[wc]), woff+n)]
		copy(dst[woff:woff+n], src[roff:roff+n])
		k.chunks[wc] = dst
		pos := uint32(wc)<<keyChunkBits | uint32(woff)
		k.keyStart[g], k.keyEnd[g] = pos, pos+uint32(n)
		woff += n
	}
	if len(k.chunks) > 0 {
		k.chunks[wc] = k.chunks[wc][:woff]
		for c := wc + 1; c < len(k.chunks); c++ {
			k.chunks[c] = k.chunks[c][:0]
		}
		k.cur = wc
	}
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
	total := 0
	for old, g := range remap {
		if g >= 0 && old < len(k.keyEnd) {
			total += int(k.keyEnd[old] - k.keyStart[old])
		}
	}
	var nk storeKeys
	nk.reserve(groups, total)
	for old, g := range remap {
		if g < 0 || int(g) >= groups {
			continue
		}
		if key := k.of(int32(old)); key != nil {
			nk.keep(g, key)
		}
	}
	*k = nk
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
	n := int64(cap(k.keyStart))*4 + int64(cap(k.keyEnd))*4 + int64(cap(k.chunks))*24
	for _, c := range k.chunks {
		n += int64(cap(c))
	}
	return n
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
