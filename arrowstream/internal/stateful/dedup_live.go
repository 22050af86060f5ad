package stateful

import (
	"context"
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// dedupLive is a deduplication's state kept in memory between epochs: per
// partition the keys seen (with their eviction time) and an index of the
// evictable keys by that time, so that a row is checked without the store
// and eviction pops only the due keys instead of scanning every key. The
// stores are written with the epoch's new and evicted keys only and read
// only to rebuild this after a restart or an aborted epoch.
type dedupLive struct {
	// version is the state version it mirrors; -1 while an epoch changes
	// it (until its commit).
	version int64
	parts   []dedupPart
}

// dedupPart is one partition's live keys.
type dedupPart struct {
	seen  map[string]int64 // key → eviction time (µs), noEviction when none
	due   timeHeap[string] // evictable keys by eviction time
	bytes int64            // approximate memory of seen and due
	spill *dedupSpill      // with Pebble: seen is a bounded cache (dedup_spill.go)
}

// noEviction marks a key that is never evicted.
const noEviction = int64(-1 << 63)

// dedupEntryOverhead approximates a key's memory besides its bytes (map
// slot, string header, heap entry).
const dedupEntryOverhead = 64

func (p *dedupPart) add(key []byte, at int64, evictable bool) {
	k := string(key)
	if evictable && p.spill != nil {
		p.seen[k] = at
		p.spill.index(at, key)
	} else if evictable {
		p.seen[k] = at
		p.due.push(at, k)
	} else {
		p.seen[k] = noEviction
	}
	p.bytes += int64(len(k)) + dedupEntryOverhead
}

// evict removes the keys whose eviction time is at or below limit and
// returns them.
func (p *dedupPart) evict(limit int64) []string {
	if p.spill != nil {
		return p.evictSpilled(limit)
	}
	var gone []string
	for p.due.due(limit) {
		e := p.due.pop()
		if at, ok := p.seen[e.v]; !ok || at != e.at {
			continue
		}
		delete(p.seen, e.v)
		p.bytes -= int64(len(e.v)) + dedupEntryOverhead
		gone = append(gone, e.v)
	}
	return gone
}

// loadLive makes the live keys mirror version, rebuilding them from the
// open stores when they do not.
func (d *statefulDedup) loadLive(version int64) error {
	if d.live != nil && d.live.version == version && len(d.live.parts) == len(d.state.stores) {
		return nil
	}
	d.live = nil
	live := &dedupLive{version: version, parts: make([]dedupPart, len(d.state.stores))}
	for p, st := range d.state.stores {
		part := &live.parts[p]
		part.seen = make(map[string]int64, st.Len())
		err := st.Scan(func(k, v []byte) bool {
			if len(v) == 8 {
				part.add(k, int64(binary.LittleEndian.Uint64(v)), true)
			} else {
				part.add(k, 0, false)
			}
			return true
		})
		if err != nil {
			return fmt.Errorf("arrowstream: rebuild the state of operator %d partition %d from version %d: %w", d.state.opID, p, version, err)
		}
	}
	d.live = live
	return nil
}

func (l *dedupLive) bytes() int64 {
	var n int64
	for i := range l.parts {
		n += l.parts[i].bytes
	}
	return n
}

// offerLive hands the partitions whose commit makes a snapshot due a view
// of their keys as the epoch leaves them (live_snapshot.go): the keys and
// eviction times copied out of the map (strings are shared, not copied),
// written as state rows in the background. The views' slices are
// reserved on the table's account until the maintenance releases them
// (the key strings are the map's, counted by the state's account; a key
// evicted while the view holds it is not counted twice, nor at all).
func (d *statefulDedup) offerLive() error {
	want := wantsLive(d.state.stores)
	for p, w := range want {
		if !w {
			continue
		}
		part := &d.live.parts[p]
		if part.spill != nil {
			// A spilled partition's map is a cache, and its store takes
			// Put/Delete, not a changelog: no live snapshot.
			continue
		}
		hold, err := d.views.hold(dedupViewBytes(len(part.seen)))
		if err != nil {
			return err
		}
		v := &dedupView{keys: make([]string, 0, len(part.seen)), ats: make([]int64, 0, len(part.seen)), hold: hold}
		for k, at := range part.seen {
			v.keys = append(v.keys, k)
			v.ats = append(v.ats, at)
		}
		d.state.stores[p].(checkpoint.LiveSnapshotter).SetLiveSnapshot(v)
	}
	return nil
}

// dedupViewBytes is the heap a view of n keys holds: a string header and
// an eviction time a key, and the view itself.
func dedupViewBytes(n int) int64 {
	return int64(n)*int64(unsafe.Sizeof("")+unsafe.Sizeof(int64(0))) + int64(unsafe.Sizeof(dedupView{}))
}

// dedupView is one partition's keys at a version, with their eviction
// times (noEviction: none).
type dedupView struct {
	keys []string
	ats  []int64
	hold *viewHold // the slices' reservation
}

// Entries implements checkpoint.LiveView: the rows the changelog wrote
// (dedupPartition): a timed key's value is its eviction time, little
// endian; an untimed key's is empty.
func (v *dedupView) Entries(_ context.Context, emit func(key, value []byte) error) error {
	var at [8]byte
	for i, k := range v.keys {
		var value []byte
		if v.ats[i] != noEviction {
			binary.LittleEndian.PutUint64(at[:], uint64(v.ats[i]))
			value = at[:]
		}
		// The store only reads the key during emit: a view of the
		// string's bytes, not a copy per key.
		if err := emit(unsafe.Slice(unsafe.StringData(k), len(k)), value); err != nil {
			return err
		}
	}
	return nil
}

// Release implements checkpoint.LiveView.
func (v *dedupView) Release() {
	v.keys, v.ats = nil, nil
	v.hold.release()
}
