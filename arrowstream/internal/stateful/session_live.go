package stateful

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// The session window's stored sessions kept live in the operator, encoded:
// the path of the aggregates that cannot be kept decoded (extension
// aggregates; session_decoded.go holds the others decoded, with no
// encoded copy beside them). Each
// partition's keys map to their state value exactly as the stores hold it
// (joinSessions: the key's sessions sorted by start, each with its end
// and encoded row), so that an epoch reads the sessions of the keys it
// touches from memory instead of the stores, and writes only its changes:
// as a changelog (checkpoint.ChangelogWriter) when the stores take one,
// which leaves them without a decoded copy of their own, or Put/Delete
// otherwise (Pebble). The values are never changed in place (a save or
// an eviction makes a new one), so a snapshot view shares them.
//
// The maps mirror the stores at the index's version; they are rebuilt
// with the index (one scan of the stores) after a restart or an aborted
// epoch. Partitions are merged in parallel, each touching only its map
// and its byte count.
//
// Only stores that take a changelog (the memory provider's) get live
// sessions: they then drop their own decoded copy. A provider that keeps
// the state on disk with a bounded working set (Pebble) is read and
// written per key as before (parts nil), so that the sessions stay
// bounded by its cache and not by the heap.
type sessionLive struct {
	parts []map[string][]byte // nil: not live, the stores are read
	bytes []int64             // by partition: keys and values, with liveEntryBytes each
}

// liveEntryBytes approximates a map entry's Go-heap overhead besides its
// key and value bytes (string and slice headers, the map's slot).
const liveEntryBytes = 64

// newSessionLive returns n empty partitions, or a sessionLive that is not
// live (on false).
func newSessionLive(n int, on bool) sessionLive {
	if !on {
		return sessionLive{}
	}
	l := sessionLive{parts: make([]map[string][]byte, n), bytes: make([]int64, n)}
	for p := range l.parts {
		l.parts[p] = map[string][]byte{}
	}
	return l
}

// on reports whether the sessions are live.
func (l *sessionLive) on() bool { return l.parts != nil }

// readState returns key's value in partition p (nil: no stored
// session), from the live sessions or the store. The bytes are only
// read, and only until the next write of the partition.
func (s *statefulSessionWindow) readState(p int, key []byte) ([]byte, error) {
	if s.index.live.on() {
		return s.index.live.parts[p][string(key)], nil
	}
	v, ok, err := s.state.stores[p].Get(key)
	if err != nil {
		return nil, fmt.Errorf("arrowstream: read state of operator %d partition %d: %w", s.opID, p, err)
	}
	if !ok {
		return nil, nil
	}
	return v, nil
}

// set makes v the value of key in partition p and reports whether the
// key is new. v is kept (not copied); the caller does not change it.
func (l *sessionLive) set(p int, key string, v []byte) (added bool) {
	m := l.parts[p]
	old, ok := m[key]
	if ok {
		l.bytes[p] -= int64(cap(old))
	} else {
		l.bytes[p] += int64(len(key)) + liveEntryBytes
	}
	m[key] = v
	l.bytes[p] += int64(cap(v))
	return !ok
}

// remove deletes key from partition p.
func (l *sessionLive) remove(p int, key string) {
	m := l.parts[p]
	if old, ok := m[key]; ok {
		l.bytes[p] -= int64(len(key)) + liveEntryBytes + int64(cap(old))
		delete(m, key)
	}
}

// total is the maps' estimated Go-heap bytes.
func (l *sessionLive) total() int64 {
	var n int64
	for _, b := range l.bytes {
		n += b
	}
	return n
}

// counts returns each partition's number of keys (the state rows the
// stores hold).
func (l *sessionLive) counts() []int64 {
	out := make([]int64, len(l.parts))
	for p, m := range l.parts {
		out[p] = int64(len(m))
	}
	return out
}

// writeState records key=v in partition p: in the live map, and in the
// epoch's changelog when the stores take one (else a Put on st).
func (s *statefulSessionWindow) writeState(p int, key string, v []byte) error {
	if !s.index.live.on() {
		return s.state.stores[p].Put([]byte(key), v)
	}
	added := s.index.live.set(p, key, v)
	if s.log.on() {
		s.log.upsert(p, unsafe.Slice(unsafe.StringData(key), len(key)), v, added)
		return nil
	}
	return s.state.stores[p].Put([]byte(key), v)
}

// deleteState removes key from partition p, live and in the stores.
func (s *statefulSessionWindow) deleteState(p int, key string) error {
	if !s.index.live.on() {
		return s.state.stores[p].Delete([]byte(key))
	}
	s.index.live.remove(p, key)
	if s.log.on() {
		s.log.remove(p, []byte(key))
		return nil
	}
	return s.state.stores[p].Delete([]byte(key))
}

// offerLive hands the partitions whose commit makes a snapshot due a view
// of their keys and values as the epoch leaves them (live_snapshot.go):
// the map's entries copied out (strings and values shared, not copied;
// neither is ever changed in place).
func (s *statefulSessionWindow) offerLive() error {
	want := wantsLive(s.state.stores)
	if want == nil {
		return nil
	}
	if s.index.dec != nil {
		return s.offerDecoded(want)
	}
	for p, w := range want {
		if !w {
			continue
		}
		m := s.index.live.parts[p]
		v := &sessionView{keys: make([]string, 0, len(m)), vals: make([][]byte, 0, len(m))}
		for k, val := range m {
			v.keys = append(v.keys, k)
			v.vals = append(v.vals, val)
		}
		s.state.stores[p].(checkpoint.LiveSnapshotter).SetLiveSnapshot(v)
	}
	return nil
}

// sessionView is one partition's keys and values at a version.
type sessionView struct {
	keys []string
	vals [][]byte
}

// Entries implements checkpoint.LiveView.
func (v *sessionView) Entries(_ context.Context, emit func(key, value []byte) error) error {
	for i, k := range v.keys {
		// The store only reads the key during emit: a view of the
		// string's bytes, not a copy per key.
		if err := emit(unsafe.Slice(unsafe.StringData(k), len(k)), v.vals[i]); err != nil {
			return err
		}
	}
	return nil
}

// Release implements checkpoint.LiveView.
func (v *sessionView) Release() { v.keys, v.vals = nil, nil }
