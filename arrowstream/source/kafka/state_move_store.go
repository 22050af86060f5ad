package kafka

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// movingProvider wraps the downstream stage's state provider: each store
// records the epoch's changes for the changelog topic, and a partition
// that moved starts the epoch with the changelog's contents (or empty).
type movingProvider struct {
	inner checkpoint.StateStoreProvider
	m     *stateMover
}

func (p *movingProvider) Name() string              { return p.inner.Name() }
func (p *movingProvider) MemoryBytes() int64        { return p.inner.MemoryBytes() }
func (p *movingProvider) Metrics() map[string]int64 { return p.inner.Metrics() }
func (p *movingProvider) Close() error              { return p.inner.Close() }

// OpenPartition implements checkpoint.StateStoreProvider; dir is
// <checkpoint>/state/<op>/<partition>.
func (p *movingProvider) OpenPartition(dir string) (checkpoint.StatePartition, error) {
	part, err1 := strconv.Atoi(filepath.Base(dir))
	op, err2 := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	if err1 != nil || err2 != nil || part < 0 || op < 0 {
		return nil, fmt.Errorf("kafka: cluster state: %s is not a state partition directory (state/<op>/<partition>)", dir)
	}
	if part >= p.m.spec.Partitions {
		return nil, fmt.Errorf("kafka: cluster state: state partition %d of operator %d: the repartition hop has %d partitions (spark.sql.shuffle.partitions must not change)", part, op, p.m.spec.Partitions)
	}
	inner, err := p.inner.OpenPartition(dir)
	if err != nil {
		return nil, err
	}
	return &movingPartition{inner: inner, m: p.m, k: partKey{op: op, part: int32(part)}}, nil
}

type movingPartition struct {
	inner checkpoint.StatePartition
	m     *stateMover
	k     partKey
}

func (p *movingPartition) MemoryBytes() int64        { return p.inner.MemoryBytes() }
func (p *movingPartition) Metrics() map[string]int64 { return p.inner.Metrics() }
func (p *movingPartition) Close() error              { return p.inner.Close() }

// Begin opens the inner store and, when the partition moved, overlays the
// contents it must hold.
func (p *movingPartition) Begin(version int64) (checkpoint.StateStore, error) {
	r, err := p.m.restoreOf(p.k, version)
	if err != nil {
		return nil, fmt.Errorf("kafka: cluster state of operator %d partition %d: %w", p.k.op, p.k.part, err)
	}
	st, err := p.inner.Begin(version)
	if err != nil {
		if r.change {
			p.m.aborted()
		}
		return nil, err
	}
	p.m.opened()
	ms := &movingStore{inner: st, m: p.m, k: p.k}
	if r.change {
		overlay := func() error { return ms.overlay(r.contents) }
		if r.snapshot {
			overlay = func() error { return ms.overlaySnapshot(r.tail) }
		}
		if err := overlay(); err != nil {
			st.Abort()
			p.m.aborted()
			return nil, err
		}
	}
	if cw, ok := st.(checkpoint.ChangelogWriter); ok {
		ms.cw = cw
		return &movingLogStore{ms}, nil
	}
	return ms, nil
}

// movingStore is one epoch's store of a moving partition.
type movingStore struct {
	inner   checkpoint.StateStore
	cw      checkpoint.ChangelogWriter // inner's, when it takes changelogs
	m       *stateMover
	k       partKey
	changes []stateChange

	// With an overlay (the partition moved this epoch) reads and writes
	// go to cur, which starts as the moved contents; Commit replaces the
	// inner store's keys (old) with cur's.
	over bool
	cur  map[string][]byte
	old  [][]byte
	// With an overlay over the local snapshot (overlaySnapshot) cur
	// starts as the snapshot, and only the keys changed since (by the
	// changelog's tail or the epoch) are written at Commit: touched
	// holds them, each with whether the snapshot had it.
	snapshot bool
	touched  map[string]bool
	logged   bool  // the operator used the changelog path
	liveRows int64 // its SetLiveRows (-1: none)
}

func (s *movingStore) overlay(contents map[string][]byte) error {
	if contents == nil {
		contents = map[string][]byte{}
	}
	s.over, s.cur, s.liveRows = true, contents, -1
	return s.inner.Scan(func(k, _ []byte) bool {
		s.old = append(s.old, append([]byte(nil), k...))
		return true
	})
}

// overlaySnapshot starts the overlay from the inner store's state (the
// local snapshot, which was the changelog's at the tail's start) with
// the changelog's tail laid over it: the state the changelog holds at
// the tail's end.
func (s *movingStore) overlaySnapshot(tail map[string][]byte) error {
	s.over, s.snapshot, s.liveRows = true, true, -1
	s.cur, s.touched = map[string][]byte{}, map[string]bool{}
	if err := s.inner.Scan(func(k, v []byte) bool {
		s.cur[string(k)] = append(make([]byte, 0, len(v)), v...)
		return true
	}); err != nil {
		return err
	}
	for k, v := range tail {
		s.touch(k)
		if v == nil {
			delete(s.cur, k)
			continue
		}
		s.cur[k] = v
	}
	return nil
}

// touch records that key changes under a snapshot overlay (before the
// change: whether the snapshot had it is what cur holds now, on the
// first change).
func (s *movingStore) touch(key string) {
	if !s.snapshot {
		return
	}
	if _, ok := s.touched[key]; !ok {
		_, had := s.cur[key]
		s.touched[key] = had
	}
}

func (s *movingStore) Version() int64 { return s.inner.Version() }

func (s *movingStore) Get(key []byte) ([]byte, bool, error) {
	if !s.over {
		return s.inner.Get(key)
	}
	v, ok := s.cur[string(key)]
	return v, ok, nil
}

func (s *movingStore) Put(key, value []byte) error {
	s.note(key, value, false)
	if !s.over {
		return s.inner.Put(key, value)
	}
	s.touch(string(key))
	s.cur[string(key)] = append([]byte(nil), value...)
	return nil
}

func (s *movingStore) Delete(key []byte) error {
	s.note(key, nil, true)
	if !s.over {
		return s.inner.Delete(key)
	}
	s.touch(string(key))
	delete(s.cur, string(key))
	return nil
}

// note records a change for the changelog (copied: the caller's slices
// are reused).
func (s *movingStore) note(key, value []byte, deleted bool) {
	c := stateChange{key: append([]byte(nil), key...)}
	if !deleted {
		c.value = append(make([]byte, 0, len(value)), value...) // never nil
	}
	s.changes = append(s.changes, c)
}

func (s *movingStore) Range(fn func(key, value []byte) bool) error {
	if !s.over {
		return s.inner.Range(fn)
	}
	keys := make([]string, 0, len(s.cur))
	for k := range s.cur {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, ok := s.cur[k] // fn may have deleted it
		if ok && !fn([]byte(k), v) {
			break
		}
	}
	return nil
}

func (s *movingStore) Scan(fn func(key, value []byte) bool) error {
	if !s.over {
		return s.inner.Scan(fn)
	}
	return s.Range(fn)
}

func (s *movingStore) Len() int {
	if !s.over {
		return s.inner.Len()
	}
	return len(s.cur)
}

func (s *movingStore) Commit(ctx context.Context) (int64, error) {
	if s.over {
		if err := s.writeOverlay(); err != nil {
			s.inner.Abort()
			s.m.aborted()
			return 0, err
		}
	}
	v, err := s.inner.Commit(ctx)
	if err != nil {
		s.m.aborted()
		return 0, err
	}
	last := s.m.committed(s.k, s.changes)
	s.changes = nil
	if last {
		// Every store of the epoch committed locally: its changes, the
		// hop offsets it read and its bookmark go to Kafka in one
		// transaction before the sink sees the epoch.
		if _, err := s.m.commitEpoch(ctx, s.inner.Version(), s.k.op); err != nil {
			s.m.aborted()
			return 0, err
		}
	}
	return v, nil
}

// writeOverlay makes the inner store hold cur: its old keys deleted, cur's
// written, by the path the operator used.
func (s *movingStore) writeOverlay() error {
	if s.snapshot {
		return s.writeSnapshotOverlay()
	}
	if s.logged && s.cw != nil {
		for _, k := range s.old {
			s.cw.LogDelete(k)
		}
		for k, v := range s.cur {
			s.cw.LogUpsert([]byte(k), v)
		}
		n := s.liveRows
		if n < 0 {
			n = int64(len(s.cur))
		}
		s.cw.SetLiveRows(n)
		return nil
	}
	for _, k := range s.old {
		if err := s.inner.Delete(k); err != nil {
			return err
		}
	}
	for k, v := range s.cur {
		if err := s.inner.Put([]byte(k), v); err != nil {
			return err
		}
	}
	return nil
}

// writeSnapshotOverlay makes the inner store, which holds the local
// snapshot, hold cur: only the keys touched since are written (a restart
// that takes its partitions back rewrites what changed, not its whole
// state).
func (s *movingStore) writeSnapshotOverlay() error {
	if s.logged && s.cw != nil {
		for k, had := range s.touched {
			if v, ok := s.cur[k]; ok {
				s.cw.LogUpsert([]byte(k), v)
			} else if had {
				s.cw.LogDelete([]byte(k))
			}
		}
		n := s.liveRows
		if n < 0 {
			n = int64(len(s.cur))
		}
		s.cw.SetLiveRows(n)
		return nil
	}
	for k, had := range s.touched {
		if v, ok := s.cur[k]; ok {
			if err := s.inner.Put([]byte(k), v); err != nil {
				return err
			}
		} else if had {
			if err := s.inner.Delete([]byte(k)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *movingStore) Abort() {
	s.inner.Abort()
	s.changes = nil
	s.m.aborted()
}

// movingLogStore is a movingStore over a store that takes changelogs
// (checkpoint.ChangelogWriter), so that operators keep that path.
type movingLogStore struct{ *movingStore }

func (s *movingLogStore) LogUpsert(key, value []byte) {
	s.note(key, value, false)
	if !s.over {
		s.cw.LogUpsert(key, value)
		return
	}
	s.logged = true
	s.touch(string(key))
	s.cur[string(key)] = append([]byte(nil), value...)
}

// LogUpsertFrom implements checkpoint.ChangelogStreamer, so that an
// operator writing large encoded values (the stream-stream join's
// batches, megabytes of Arrow IPC) keeps its one-pass path in a cluster.
// The value is needed twice: for the changelog topic (the change this
// store records) and for the inner store. It is written once into a
// buffer of the change's own, and, when the inner store streams, into
// the inner changelog in the same pass; when write fails nothing is
// recorded in either.
func (s *movingLogStore) LogUpsertFrom(key []byte, size int, write func(w io.Writer) error) error {
	buf := bytes.NewBuffer(make([]byte, 0, max(size, 0)))
	switch inner, ok := s.cw.(checkpoint.ChangelogStreamer); {
	case s.over:
		if err := write(buf); err != nil {
			return err
		}
	case ok:
		if err := inner.LogUpsertFrom(key, size, func(w io.Writer) error {
			return write(io.MultiWriter(w, buf))
		}); err != nil {
			return err
		}
	default:
		if err := write(buf); err != nil {
			return err
		}
		s.cw.LogUpsert(key, buf.Bytes())
	}
	// The buffer is the change's alone (never nil, as note's): no copy.
	value := buf.Bytes()
	if value == nil {
		value = []byte{}
	}
	s.changes = append(s.changes, stateChange{key: append([]byte(nil), key...), value: value})
	if s.over {
		// cur and the change share the bytes: neither is modified in
		// place (Put and LogUpsert replace a value with a copy).
		s.logged = true
		s.touch(string(key))
		s.cur[string(key)] = value
	}
	return nil
}

func (s *movingLogStore) LogDelete(key []byte) {
	s.note(key, nil, true)
	if !s.over {
		s.cw.LogDelete(key)
		return
	}
	s.logged = true
	s.touch(string(key))
	delete(s.cur, string(key))
}

func (s *movingLogStore) SetLiveRows(n int64) {
	if !s.over {
		s.cw.SetLiveRows(n)
		return
	}
	s.logged = true
	s.liveRows = n
}

var (
	_ checkpoint.StateStoreProvider = (*movingProvider)(nil)
	_ checkpoint.ChangelogWriter    = (*movingLogStore)(nil)
	_ checkpoint.ChangelogStreamer  = (*movingLogStore)(nil)
)
