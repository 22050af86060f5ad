package stateful

import (
	"context"
	"fmt"
	"time"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// sessionIndex is what a session window operator keeps in memory between
// epochs: the stored sessions themselves (live, session_live.go), their
// number, and an index of the sessions by end time, so that eviction
// reads only the keys that have a due session and no epoch ranges over
// the whole state. It mirrors the stores as of version; it is rebuilt
// from them (one scan) after a restart or an aborted epoch.
type sessionIndex struct {
	// version is the state version it mirrors, -1 while an epoch changes
	// the state (until its commit).
	version int64
	// logged: built for stores that take a changelog (the memory
	// provider's): the sessions are then held by the operator, decoded
	// (dec) or, for aggregates that cannot be, encoded (live).
	logged   bool
	live     sessionLive                 // every stored session, by partition and key; not kept beside dec
	count    int64                       // stored sessions
	ends     chunkedTimeHeap[sessionKey] // (end, partition, key) of stored sessions
	keyBytes int64                       // bytes of the keys in ends
	// dec is the sessions decoded (session_decoded.go), nil when they
	// are not live or their aggregates cannot be kept decoded.
	dec *sessionDecoded
}

// dropIndex lets go of the index (rebuilt by the next epoch's load).
func (s *statefulSessionWindow) dropIndex() {
	if s.index != nil {
		s.index.dec.close()
		s.index = nil
	}
}

func (idx *sessionIndex) push(e sessionEnd) {
	idx.ends.push(e.end, sessionKey{part: e.part, key: e.key})
	idx.keyBytes += int64(len(e.key))
}

func (idx *sessionIndex) pop() sessionEnd {
	t := idx.ends.pop()
	idx.keyBytes -= int64(len(t.v.key))
	return sessionEnd{end: t.at, part: t.v.part, key: t.v.key}
}

// sessionDelta is one partition's change to the index in an epoch.
type sessionDelta struct {
	removed int64        // sessions of the touched keys before the merge
	added   []sessionEnd // sessions saved
}

// sessionEnd is a stored session's end (µs), with its key and partition.
// An entry stays when its session is merged into a longer one (the key
// then has another entry with the later end); eviction finds such a stale
// entry's key without a due session and moves on.
type sessionEnd struct {
	end  int64
	part int32
	key  string
}

// sessionKey is where a stored session lives: its partition and key.
type sessionKey struct {
	part int32
	key  string
}

// indexed reports whether sessions are evicted (and so indexed by end).
func (s *statefulSessionWindow) indexed() bool { return s.mode == stream.Append && s.timed }

// loadIndex makes the index mirror version, rebuilding it from the open
// stores when it does not.
func (s *statefulSessionWindow) loadIndex(ctx context.Context, version int64) error {
	if s.index != nil && s.index.version == version {
		return nil
	}
	s.dropIndex()
	idx := &sessionIndex{version: version, logged: s.log.on()}
	// With a changelog the sessions are held decoded when the aggregates
	// allow it, and then only decoded: no encoded copy beside them.
	var d *sessionDecoded
	if idx.logged {
		d = s.newSessionDecoded()
	}
	idx.live = newSessionLive(len(s.state.stores), idx.logged && d == nil)
	var ld sessionLoad
	byEnd := s.indexed()
	var err error
	for p, st := range s.state.stores {
		scanErr := st.Scan(func(k, v []byte) bool {
			entries, e := splitSessions(v)
			if e != nil {
				err = fmt.Errorf("arrowstream: state of operator %d partition %d: %w", s.opID, p, e)
				return false
			}
			idx.count += int64(len(entries))
			key := string(k)
			if idx.live.on() {
				// The store's bytes are only valid during the call.
				idx.live.set(p, key, append([]byte(nil), v...))
			}
			if d != nil {
				ld.add(d, key, p, entries)
			}
			if byEnd {
				for _, en := range entries {
					idx.push(sessionEnd{end: en.end, part: int32(p), key: key})
				}
			}
			return true
		})
		if err == nil && scanErr != nil {
			err = fmt.Errorf("arrowstream: rebuild the session index of operator %d partition %d from version %d: %w", s.opID, p, version, scanErr)
		}
		if err != nil {
			d.close()
			return err
		}
	}
	if d != nil {
		if err := s.loadDecoded(ctx, d, &ld); err != nil {
			d.close()
			return err
		}
		idx.dec = d
	}
	s.index = idx
	if s.log.on() {
		s.log.rows = idx.keyCounts(len(s.state.stores))
	}
	return nil
}

// keyCounts returns each of the n partitions' number of keys (the state
// rows the stores hold).
func (idx *sessionIndex) keyCounts(n int) []int64 {
	if idx.dec == nil {
		return idx.live.counts()
	}
	out := make([]int64, n)
	idx.dec.each(func(ks *keySessions) {
		if ks.stored {
			out[ks.part]++
		}
	})
	return out
}

// bytes approximates the index's memory: the live sessions, the end
// index's entries and their keys.
func (idx *sessionIndex) bytes() int64 {
	var dec int64
	if idx.dec != nil {
		dec = idx.dec.heapBytes(idx.count)
	}
	return dec + idx.live.total() + int64(idx.ends.capacity())*int64(unsafe.Sizeof(timed[sessionKey]{})) + idx.keyBytes
}

// apply folds the partitions' changes of the epoch into the index.
func (idx *sessionIndex) apply(deltas []sessionDelta, byEnd bool) {
	for _, d := range deltas {
		idx.count += int64(len(d.added)) - d.removed
		if byEnd {
			for _, e := range d.added {
				idx.push(e)
			}
		}
	}
}

// evictIndexed removes the sessions whose end is at or below the
// watermark and returns them (partial layout): it pops the due entries of
// the index and rewrites only their keys. (Sessions kept decoded are
// evicted by evictDecoded.)
func (s *statefulSessionWindow) evictIndexed(ctx context.Context, wmMs int64) ([]arrow.Record, error) {
	start := time.Now()
	limit := wmMs * 1000
	idx := s.index
	type due struct {
		part int32
		key  string
	}
	var keysDue []due
	seen := map[due]bool{}
	for idx.ends.due(limit) {
		e := idx.pop()
		d := due{e.part, e.key}
		if !seen[d] {
			seen[d] = true
			keysDue = append(keysDue, d)
		}
	}
	var keys, vals [][]byte
	for _, d := range keysDue {
		p := int(d.part)
		k := unsafe.Slice(unsafe.StringData(d.key), len(d.key))
		v, err := s.readState(p, k)
		if err != nil {
			return nil, err
		}
		if v == nil {
			continue
		}
		if !idx.live.on() {
			v = append([]byte(nil), v...) // a store's bytes may not outlive its next write
		}
		// A live value is never changed in place: the entries may
		// alias it.
		entries, err := splitSessions(v)
		if err != nil {
			return nil, fmt.Errorf("arrowstream: state of operator %d partition %d: %w", s.opID, p, err)
		}
		var keep []sessionEntry
		taken := 0
		for _, en := range entries {
			if en.end <= limit {
				keys = append(keys, k)
				vals = append(vals, en.val)
				taken++
			} else {
				keep = append(keep, en)
			}
		}
		if taken == 0 {
			continue // a stale entry: the session grew past the watermark
		}
		idx.count -= int64(taken)
		var werr error
		if len(keep) == 0 {
			werr = s.deleteState(p, d.key)
		} else {
			werr = s.writeState(p, d.key, joinSessions(keep))
		}
		if werr != nil {
			return nil, fmt.Errorf("arrowstream: write state of operator %d partition %d: %w", s.opID, d.part, werr)
		}
	}
	s.progress.AllRemovalsTimeMs += time.Since(start).Milliseconds()
	if len(keys) == 0 {
		return nil, nil
	}
	s.progress.NumRowsRemoved += int64(len(keys))
	rec, err := s.decodeState(codecPair{s.keyCodec, s.valCodec}, keys, vals)
	if err != nil {
		return nil, err
	}
	return []arrow.Record{rec}, nil
}
