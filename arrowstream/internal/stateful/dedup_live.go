package stateful

import (
	"encoding/binary"
	"fmt"
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
	due   dedupHeap        // evictable keys by eviction time
	bytes int64            // approximate memory of seen and due
}

// noEviction marks a key that is never evicted.
const noEviction = int64(-1 << 63)

// dedupEntryOverhead approximates a key's memory besides its bytes (map
// slot, string header, heap entry).
const dedupEntryOverhead = 64

func (p *dedupPart) add(key []byte, at int64, evictable bool) {
	k := string(key)
	if evictable {
		p.seen[k] = at
		p.due.push(dedupEntry{at: at, key: k})
	} else {
		p.seen[k] = noEviction
	}
	p.bytes += int64(len(k)) + dedupEntryOverhead
}

// evict removes the keys whose eviction time is at or below limit and
// returns them.
func (p *dedupPart) evict(limit int64) []string {
	var gone []string
	for len(p.due) > 0 && p.due[0].at <= limit {
		e := p.due.pop()
		if at, ok := p.seen[e.key]; !ok || at != e.at {
			continue
		}
		delete(p.seen, e.key)
		p.bytes -= int64(len(e.key)) + dedupEntryOverhead
		gone = append(gone, e.key)
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

// dedupEntry is an evictable key and its eviction time (µs).
type dedupEntry struct {
	at  int64
	key string
}

// dedupHeap is a min-heap by eviction time.
type dedupHeap []dedupEntry

func (h *dedupHeap) push(e dedupEntry) {
	*h = append(*h, e)
	x := *h
	for i := len(x) - 1; i > 0; {
		p := (i - 1) / 2
		if x[p].at <= x[i].at {
			break
		}
		x[p], x[i] = x[i], x[p]
		i = p
	}
}

func (h *dedupHeap) pop() dedupEntry {
	x := *h
	top := x[0]
	last := len(x) - 1
	x[0] = x[last]
	x[last] = dedupEntry{}
	x = x[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(x) && x[l].at < x[m].at {
			m = l
		}
		if r < len(x) && x[r].at < x[m].at {
			m = r
		}
		if m == i {
			break
		}
		x[m], x[i] = x[i], x[m]
		i = m
	}
	*h = x
	return top
}
