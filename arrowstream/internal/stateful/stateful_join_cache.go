package stateful

import (
	"container/heap"
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// joinEntry is one stored row of a join side, kept in memory between
// epochs of a running query.
type joinEntry struct {
	storeKey []byte
	key      string // encoded join key
	keyNull  bool   // a null (not null-safe) key: never matches
	enc      []byte // the encoded row
	matched  bool
	time     int64 // eviction time (µs), with hasTime
	hasTime  bool
	heapIdx  int // index in sideCache.byTime, -1 when not there
}

// entryHeap orders entries by eviction time (a min-heap).
type entryHeap []*joinEntry

func (h entryHeap) Len() int           { return len(h) }
func (h entryHeap) Less(i, j int) bool { return h[i].time < h[j].time }
func (h entryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIdx, h[j].heapIdx = i, j
}
func (h *entryHeap) Push(x any) {
	e := x.(*joinEntry)
	e.heapIdx = len(*h)
	*h = append(*h, e)
}
func (h *entryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	e.heapIdx = -1
	return e
}

// sideCache is a join side's decoded state: its rows by join key and, for
// a side with state eviction, by eviction time. It mirrors the state store
// as of the last committed epoch, so an epoch reads only the stored rows
// that share a key with the other side's new rows or are evicted, instead
// of decoding the whole state (Spark's join state manager likewise looks
// rows up by key and scans only for eviction).
type sideCache struct {
	byKey  map[string][]*joinEntry
	byTime entryHeap
	bytes  int64 // approximate memory of the entries
}

// entryOverhead approximates a cached entry's memory besides its bytes
// (the struct, its map slot and heap slot).
const entryOverhead = 128

func (e *joinEntry) size() int64 {
	return int64(len(e.storeKey)+len(e.key)+len(e.enc)) + entryOverhead
}

func (c *sideCache) add(e *joinEntry) {
	c.bytes += e.size()
	c.byKey[e.key] = append(c.byKey[e.key], e)
	e.heapIdx = -1
	if e.hasTime {
		heap.Push(&c.byTime, e)
	}
}

func (c *sideCache) remove(e *joinEntry) {
	c.bytes -= e.size()
	list := c.byKey[e.key]
	for i, x := range list {
		if x == e {
			list[i] = list[len(list)-1]
			list[len(list)-1] = nil
			list = list[:len(list)-1]
			break
		}
	}
	if len(list) == 0 {
		delete(c.byKey, e.key)
	} else {
		c.byKey[e.key] = list
	}
	if e.heapIdx >= 0 {
		heap.Remove(&c.byTime, e.heapIdx)
	}
}

// evictTime is the time of row i of rec that drives the side's eviction.
func (side *joinSide) evictTime(rec arrow.Record, i int) (int64, bool) {
	if side.evict == evictNever || side.evictCol < 0 {
		return 0, false
	}
	return timeAt(rec.Column(side.evictCol), i)
}

// loadCache reads side i's rows of partition p from its open store.
func (s *statefulJoin) loadCache(ctx context.Context, p, i int) (*sideCache, error) {
	side, tag, st := s.sides[i], byte(i), s.state.stores[p]
	r := &sideRows{}
	defer r.release()
	var enc [][]byte
	err := st.Range(func(k, v []byte) bool {
		if len(k) > 0 && k[0] == tag && len(v) > 0 {
			r.storeKeys = append(r.storeKeys, append([]byte(nil), k...))
			r.wasMatch = append(r.wasMatch, v[0] == 1)
			enc = append(enc, append([]byte(nil), v[1:]...))
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("arrowstream: read state of operator %d partition %d: %w", s.state.opID, p, err)
	}
	if err := s.decodeSide(s.parts[p].codecs[i], r, enc); err != nil {
		return nil, err
	}
	if err := s.encodeKeys(ctx, side, r); err != nil {
		return nil, err
	}
	c := &sideCache{byKey: map[string][]*joinEntry{}}
	for j := range enc {
		e := &joinEntry{storeKey: r.storeKeys[j], key: r.keys[j], keyNull: r.keyNull[j], enc: enc[j], matched: r.wasMatch[j]}
		e.time, e.hasTime = side.evictTime(r.rec, j)
		c.add(e)
	}
	return c, nil
}

// decodeSide decodes encoded rows of a side into r.rec (an empty record
// for none).
func (s *statefulJoin) decodeSide(codec *rowCodec, r *sideRows, enc [][]byte) error {
	if len(enc) == 0 {
		cols := make([]arrow.Array, codec.schema.NumFields())
		for c, f := range codec.schema.Fields() {
			cols[c] = array.MakeArrayOfNull(s.mem, f.Type, 0)
		}
		r.rec = assemble(codec.schema, nil, cols, 0)
		return nil
	}
	cols, err := codec.decode(s.mem, enc)
	if err != nil {
		return err
	}
	r.rec = assemble(codec.schema, nil, cols, len(enc))
	return nil
}

// relevant returns the partition's cached rows of side i that the epoch needs: those
// whose key equals a new row's key on the other side (they may join), and
// those at or below the eviction threshold thr (popped from the time
// index; they are removed or emitted this epoch).
func (jp *joinPart) relevant(i int, other *sideRows, thr int64, evict bool) []*joinEntry {
	c := jp.caches[i]
	seen := map[*joinEntry]bool{}
	var out []*joinEntry
	for j, k := range other.keys {
		if other.keyNull[j] || other.excluded[j] {
			continue
		}
		for _, e := range c.byKey[k] {
			if !seen[e] {
				seen[e] = true
				out = append(out, e)
			}
		}
	}
	if evict {
		for c.byTime.Len() > 0 && c.byTime[0].time <= thr {
			e := heap.Pop(&c.byTime).(*joinEntry)
			if !seen[e] {
				seen[e] = true
				out = append(out, e)
			}
		}
	}
	return out
}

// withState puts the cached stored rows entries before a side's new rows
// (fresh, which stays owned by the caller).
func (s *statefulJoin) withState(codec *rowCodec, fresh *sideRows, entries []*joinEntry) (*sideRows, error) {
	n := len(entries)
	r := &sideRows{nState: n, entries: entries}
	enc := make([][]byte, 0, n+len(fresh.enc))
	for _, e := range entries {
		r.storeKeys = append(r.storeKeys, e.storeKey)
		r.wasMatch = append(r.wasMatch, e.matched)
		r.keys = append(r.keys, e.key)
		r.keyNull = append(r.keyNull, e.keyNull)
		enc = append(enc, e.enc)
	}
	stored := &sideRows{}
	if err := s.decodeSide(codec, stored, enc); err != nil {
		return nil, err
	}
	rec, err := concatRecords(s.mem, codec.schema, []arrow.Record{stored.rec, fresh.rec})
	stored.release()
	if err != nil {
		return nil, err
	}
	r.rec = rec
	r.enc = append(enc, fresh.enc...)
	r.keys = append(r.keys, fresh.keys...)
	r.keyNull = append(r.keyNull, fresh.keyNull...)
	r.hashes = append(make([]uint64, n), fresh.hashes...)
	r.excluded = append(make([]bool, n), fresh.excluded...)
	r.wasMatch = append(r.wasMatch, make([]bool, len(fresh.enc))...)
	r.matched = append([]bool(nil), r.wasMatch...)
	return r, nil
}

// evictThreshold is the side's state-eviction threshold (µs) of the epoch,
// and whether the side evicts at all.
func (s *statefulJoin) evictThreshold(ep Epoch, side *joinSide) (int64, bool) {
	if !ep.HasWatermark || side.evict == evictNever {
		return 0, false
	}
	thr := ep.WatermarkMs * 1000
	if side.evict == evictValue {
		thr += side.offset
	}
	return thr, true
}
