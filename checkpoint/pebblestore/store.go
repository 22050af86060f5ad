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
	// err is the first read or write error: it is returned to the caller
	// and also fails Commit, so that an epoch whose operator dropped it is
	// not committed.
	err  error
	done bool
	// acct reserves the batch's updates on the table's account while the
	// store holds them (batch_account.go).
	acct batchAccount
}

func (s *store) Version() int64 { return s.version }

func (s *store) fail(op string, key []byte, err error) error {
	err = fmt.Errorf("pebblestore: %s key %x in %s: %w", op, key, s.p.dir, err)
	if s.err == nil {
		s.err = err
	}
	return err
}

// Get implements checkpoint.StateStore. The value is a copy: Pebble's
// slice is valid only until its closer is closed.
func (s *store) Get(key []byte) ([]byte, bool, error) {
	v, closer, err := s.batch.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		s.exists[string(key)] = false
		return nil, false, nil
	}
	if err != nil {
		return nil, false, s.fail("get", key, err)
	}
	out := bytes.Clone(v)
	if out == nil {
		out = []byte{}
	}
	if err := closer.Close(); err != nil {
		return nil, false, s.fail("get", key, err)
	}
	s.exists[string(key)] = true
	return out, true, nil
}

// live reports whether key is live, from what this epoch saw or a lookup.
func (s *store) live(key []byte) (bool, error) {
	if ok, seen := s.exists[string(key)]; seen {
		return ok, nil
	}
	_, closer, err := s.batch.Get(key)
	if err != nil {
		if !errors.Is(err, pebble.ErrNotFound) {
			return false, s.fail("get", key, err)
		}
		return false, nil
	}
	if err := closer.Close(); err != nil {
		return false, s.fail("get", key, err)
	}
	return true, nil
}

func (s *store) Put(key, value []byte) error {
	live, err := s.live(key)
	if err != nil {
		return err
	}
	if err := s.acct.grow(len(key), len(value)); err != nil {
		return s.fail("put", key, err)
	}
	if err := s.batch.Set(key, value, nil); err != nil {
		return s.fail("put", key, err)
	}
	if !live {
		s.numKeys++
	}
	s.exists[string(key)] = true
	return nil
}

func (s *store) Delete(key []byte) error {
	live, err := s.live(key)
	if err != nil || !live {
		return err
	}
	if err := s.acct.grow(len(key), 0); err != nil {
		return s.fail("delete", key, err)
	}
	if err := s.batch.Delete(key, nil); err != nil {
		return s.fail("delete", key, err)
	}
	s.numKeys--
	s.exists[string(key)] = false
	return nil
}

func (s *store) Len() int { return int(s.numKeys) }

// Range visits keys in bytewise order; key and value are copies the
// callback may keep, and it may update the store while ranging.
func (s *store) Range(fn func(key, value []byte) bool) error {
	it, err := s.batch.NewIter(nil)
	if err != nil {
		return s.fail("range from", nil, err)
	}
	var readErr error
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			readErr = s.fail("read", it.Key(), err)
			break
		}
		if !fn(bytes.Clone(it.Key()), bytes.Clone(v)) {
			break
		}
	}
	if err := it.Close(); err != nil && readErr == nil {
		readErr = s.fail("range", nil, err)
	}
	return readErr
}

// Scan is Range: Pebble's order costs nothing extra.
func (s *store) Scan(fn func(key, value []byte) bool) error { return s.Range(fn) }

// Commit writes version+1 (see upload.go).
func (s *store) Commit(ctx context.Context) (int64, error) {
	if s.done {
		return 0, errors.New("pebblestore: state store already committed or aborted")
	}
	if s.p.glog != nil {
		s.Abort()
		return 0, fmt.Errorf("pebblestore: state %s is group-committed: commit it with the provider's CommitGroup", s.p.dir)
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
	defer s.acct.release() // the batch is written or dropped by then
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
	s.acct.release()
	s.p.mu.Lock()
	s.p.busy = false
	s.p.mu.Unlock()
}
