package stateful

import (
	"encoding/binary"
	"fmt"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// The bounded working set of a deduplication over the Pebble provider
// (as the aggregation's, stateful_agg_spill.go): each partition's seen
// keys are a cache of at most its share of stateStore.pebble.liveStateBytes;
// a row whose key the cache lacks is checked against the store, with one
// multi-get per batch of rows over the keys the cache lacks, and a cache
// over its budget is emptied at the end of the epoch (every key is in the
// store by then). Eviction by the watermark needs the keys by time: they
// stay in memory as runs of encoded keys per eviction time (the key's
// bytes and 4 more each, instead of a map entry, a string and a heap entry
// per key), rebuilt from the stores on start, restart or after an aborted
// epoch, and eviction deletes the due keys without reading them.

// dedupSpill is one partition's time index and budget in bounded mode.
type dedupSpill struct {
	budget    int64
	byTime    map[int64]*keyRun
	times     timeHeap[struct{}]
	timeBytes int64
}

func (sp *dedupSpill) index(at int64, key []byte) {
	r := sp.byTime[at]
	if r == nil {
		r = &keyRun{}
		sp.byTime[at] = r
		sp.times.push(at, struct{}{})
		sp.timeBytes += spillRunBytes
	}
	r.add(key)
	sp.timeBytes += int64(len(key)) + spillTimeEntryBytes
}

// loadSpilled sets up the bounded working set of every partition: empty
// caches, and the time index rebuilt from the stores' keys and values.
func (d *statefulDedup) loadSpilled(version, budget int64) error {
	n := len(d.state.stores)
	live := &dedupLive{version: version, parts: make([]dedupPart, n)}
	for p, st := range d.state.stores {
		part := &live.parts[p]
		part.seen = map[string]int64{}
		part.spill = &dedupSpill{budget: budget / int64(n), byTime: map[int64]*keyRun{}}
		err := st.Scan(func(k, v []byte) bool {
			if len(v) == 8 {
				part.spill.index(int64(binary.LittleEndian.Uint64(v)), k)
			}
			return true
		})
		if err != nil {
			return fmt.Errorf("arrowstream: rebuild the time index of operator %d partition %d from version %d: %w", d.state.opID, p, version, err)
		}
	}
	d.live = live
	return nil
}

// loadLiveFor makes the live keys mirror the epoch's version: all of them
// with the memory provider, bounded caches over the stores with Pebble.
func (d *statefulDedup) loadLiveFor(ep Epoch) error {
	budget, bounded, err := liveStateBudget(ep.Conf)
	if err != nil {
		return err
	}
	if !bounded {
		if d.live != nil && d.live.parts[0].spill != nil {
			d.live = nil
		}
		return d.loadLive(ep.ID)
	}
	if d.live != nil && d.live.version == ep.ID && len(d.live.parts) == len(d.state.stores) && d.live.parts[0].spill != nil {
		return nil
	}
	d.live = nil
	return d.loadSpilled(ep.ID, budget)
}

// readBackSeen adds to the partition's cache the keys of rec (encoded by
// codec) that the cache lacks and the store holds, with one multi-get.
func readBackSeen(st checkpoint.StateStore, part *dedupPart, codec *rowCodec, n int) error {
	var keys [][]byte
	asked := map[string]bool{}
	for i := 0; i < n; i++ {
		k := codec.at(i)
		if _, ok := part.seen[string(k)]; ok || asked[string(k)] {
			continue
		}
		asked[string(k)] = true
		keys = append(keys, append([]byte(nil), k...))
	}
	return checkpoint.GetMany(st, keys, func(i int, v []byte) {
		at := noEviction
		if len(v) == 8 {
			at = int64(binary.LittleEndian.Uint64(v))
		}
		part.seen[string(keys[i])] = at
		part.bytes += int64(len(keys[i])) + dedupEntryOverhead
	})
}

// evictSpilled pops the keys due at limit from the time index (they leave
// the cache too) and returns them.
func (p *dedupPart) evictSpilled(limit int64) []string {
	sp := p.spill
	var gone []string
	for sp.times.due(limit) {
		at := sp.times.pop().at
		r := sp.byTime[at]
		delete(sp.byTime, at)
		sp.timeBytes -= spillRunBytes + int64(len(r.data)) + int64(len(r.ends))*spillTimeEntryBytes
		r.each(func(k []byte) {
			if _, ok := p.seen[string(k)]; ok {
				delete(p.seen, string(k))
				p.bytes -= int64(len(k)) + dedupEntryOverhead
			}
			gone = append(gone, string(k))
		})
	}
	return gone
}

// trimSpilled empties the partitions' caches that outgrew their budget.
func (l *dedupLive) trimSpilled() {
	for i := range l.parts {
		p := &l.parts[i]
		if p.spill != nil && p.bytes > p.spill.budget {
			p.seen = map[string]int64{}
			p.bytes = 0
		}
	}
}

// spilledBytes is the time indexes' memory.
func (l *dedupLive) spilledBytes() int64 {
	var n int64
	for i := range l.parts {
		if sp := l.parts[i].spill; sp != nil {
			n += sp.timeBytes
		}
	}
	return n
}
