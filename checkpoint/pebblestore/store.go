package pebblestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// store is one epoch's StateStore: reads go through an indexed batch that
// holds the epoch's updates over the partition's version.
type store struct {
	p       *Partition
	version int64
	batch   *pebble.Batch
	numKeys int64
	// exists remembers, for keys read or written in this epoch, whether
	// they are live, so that Put after Get (the operators' pattern) does
	// not look the key up again to keep Len exact.
	exists map[string]bool
	// err is the first read or write error: the StateStore contract has no
	// error results, so it surfaces at Commit and fails the epoch.
	err  error
	done bool
}

func (s *store) Version() int64 { return s.version }

func (s *store) fail(op string, key []byte, err error) {
	if s.err == nil {
		s.err = fmt.Errorf("pebblestore: %s key %x in %s: %w", op, key, s.p.dir, err)
	}
}

// get returns a copy of the value: Pebble's slice is valid only until its
// closer is closed, and callers may keep values.
func (s *store) get(key []byte) ([]byte, bool) {
	v, closer, err := s.batch.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false
	}
	if err != nil {
		s.fail("get", key, err)
		return nil, false
	}
	out := bytes.Clone(v)
	if out == nil {
		out = []byte{}
	}
	closer.Close()
	return out, true
}

func (s *store) Get(key []byte) ([]byte, bool) {
	v, ok := s.get(key)
	s.exists[string(key)] = ok
	return v, ok
}

// live reports whether key is live, from what this epoch saw or a lookup.
func (s *store) live(key []byte) bool {
	if ok, seen := s.exists[string(key)]; seen {
		return ok
	}
	_, closer, err := s.batch.Get(key)
	if err != nil {
		if !errors.Is(err, pebble.ErrNotFound) {
			s.fail("get", key, err)
		}
		return false
	}
	closer.Close()
	return true
}

func (s *store) Put(key, value []byte) {
	if !s.live(key) {
		s.numKeys++
	}
	s.exists[string(key)] = true
	if err := s.batch.Set(key, value, nil); err != nil {
		s.fail("put", key, err)
	}
}

func (s *store) Delete(key []byte) {
	if !s.live(key) {
		return
	}
	s.numKeys--
	s.exists[string(key)] = false
	if err := s.batch.Delete(key, nil); err != nil {
		s.fail("delete", key, err)
	}
}

func (s *store) Len() int { return int(s.numKeys) }

// Range visits keys in bytewise order; key and value are copies the
// callback may keep, and it may update the store while ranging.
func (s *store) Range(fn func(key, value []byte) bool) {
	it, err := s.batch.NewIter(nil)
	if err != nil {
		s.fail("range from", nil, err)
		return
	}
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			s.fail("read", it.Key(), err)
			break
		}
		if !fn(bytes.Clone(it.Key()), bytes.Clone(v)) {
			break
		}
	}
	if err := it.Close(); err != nil {
		s.fail("range", nil, err)
	}
}

// Scan is Range: Pebble's order costs nothing extra.
func (s *store) Scan(fn func(key, value []byte) bool) { s.Range(fn) }

// Commit writes version+1 (see upload.go).
func (s *store) Commit(ctx context.Context) (int64, error) {
	if s.done {
		return 0, errors.New("pebblestore: state store already committed or aborted")
	}
	if s.err != nil {
		err := s.err
		s.Abort()
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		s.Abort()
		return 0, err
	}
	s.done = true
	p := s.p
	p.mu.Lock()
	defer p.mu.Unlock()
	p.busy = false
	next, err := p.commit(s.batch, s.version, s.numKeys)
	if err != nil {
		// The db may hold part of the epoch: the next Begin restores.
		p.version = -1
		return 0, err
	}
	return next, nil
}

func (s *store) Abort() {
	if s.done {
		return
	}
	s.done = true
	s.batch.Close()
	s.p.mu.Lock()
	s.p.busy = false
	s.p.mu.Unlock()
}
