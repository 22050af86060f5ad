package checkpoint

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// ChangelogWriter is the write path of a store for an operator that keeps
// its state live in memory between epochs (a streaming aggregation's hash
// table, a deduplication's key map, a stream-stream join's batches,
// flatMapGroupsWithState's keys): instead of Put and Delete, which
// keep a second decoded copy of the state in the store, the operator logs
// the epoch's changes and the store writes them as the epoch's delta,
// appending the bytes to one Arrow batch without any per-key map insert.
// After such a commit the partition holds no decoded copy of the state:
// the operator does. The files are those Put/Delete write (a delta is a
// batch of upserts and deletes), so recovery is the usual rebuild from
// the newest snapshot plus the deltas after it; snapshots are compacted
// from the files in the background (compactInBackground).
//
// A store in changelog mode (after its first Log or SetLiveRows call)
// refuses Put and Delete in the same epoch. Reads still work: they load
// the version from the files first (an operator rebuilding its live state
// after a restart or an aborted epoch reads it once).
type ChangelogWriter interface {
	// LogUpsert records that key holds value after this epoch (both are
	// copied).
	LogUpsert(key, value []byte)
	// LogDelete records that key is gone after this epoch. Changes apply
	// in the order they are logged: an upsert then a delete of one key
	// leaves it deleted.
	LogDelete(key []byte)
	// SetLiveRows declares the number of keys the partition holds after
	// this epoch (what Len reports, without a decoded copy to count).
	// Every epoch of a changelog operator calls it, changes or not, so
	// that the partition stays without a decoded copy.
	SetLiveRows(n int64)
}

// changelog is one epoch's logged changes: keys with their value (null:
// deleted), in log order.
type changelog struct {
	// keys and values are nil until the first change: every partition of
	// an operator sets its live rows every epoch, and most change nothing
	// (a pair of builders is most of an empty epoch's allocations).
	keys, values *array.BinaryBuilder
	rows         int64 // live keys after the epoch (SetLiveRows)
	upserted     int64 // key and value bytes of the upserts
	deleted      int64 // key bytes of the deletes
}

var _ ChangelogWriter = (*store)(nil)

func (s *store) changes() *changelog {
	if s.cl == nil {
		// In the store: every partition of a changelog operator sets its
		// live rows every epoch, and a changelog of its own was one of
		// the two allocations per partition of an empty epoch.
		s.clBuf = changelog{rows: -1}
		s.cl = &s.clBuf
	}
	return s.cl
}

// builders returns the changelog with its builders made.
func (s *store) builders() *changelog {
	cl := s.changes()
	if cl.keys == nil {
		mem := s.p.opts.Allocator
		cl.keys = array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
		cl.values = array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
	}
	return cl
}

// LogUpsert implements ChangelogWriter.
func (s *store) LogUpsert(key, value []byte) {
	cl := s.builders()
	cl.keys.Append(key)
	cl.values.Append(value)
	cl.upserted += int64(len(key) + len(value))
}

// LogDelete implements ChangelogWriter.
func (s *store) LogDelete(key []byte) {
	cl := s.builders()
	cl.keys.Append(key)
	cl.values.AppendNull()
	cl.deleted += int64(len(key))
}

// SetLiveRows implements ChangelogWriter.
func (s *store) SetLiveRows(n int64) { s.changes().rows = n }

func (s *store) releaseChangelog() {
	if s.cl != nil && s.cl.keys != nil {
		s.cl.keys.Release()
		s.cl.values.Release()
	}
	s.cl = nil
}

// errMixedWrites refuses Put/Delete on a store in changelog mode: the
// delta would miss them.
var errMixedWrites = errors.New("checkpoint: Put/Delete on a state store whose epoch already logged changes (ChangelogWriter): one epoch uses one write path")

// materialize loads the version the store reads when the partition holds
// no decoded copy (the last epoch committed a changelog). It is the read
// path of a changelog partition: rare (a rebuild), and it fails the
// store's commit when the files cannot be read.
func (s *store) materialize() error {
	if s.err != nil {
		return s.err
	}
	p := s.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.dataless {
		return nil
	}
	data, err := p.load(s.version)
	if err != nil {
		s.err = err
		return err
	}
	p.data, p.dataless = data, false
	p.bytes = 0
	for k, v := range data {
		p.bytes += int64(len(k) + len(v))
	}
	p.memBytes.Store(p.bytes)
	return nil
}

// prepareChangelog checks the store and encodes the logged changes as
// version+1's delta (when encode is set or there are changes); changed
// reports whether any change was logged. On error the store is aborted.
func (s *store) prepareChangelog(ctx context.Context, encode bool) (raw []byte, changed bool, err error) {
	if s.err != nil {
		err := s.err
		s.Abort()
		return nil, false, err
	}
	if len(s.pending) > 0 || len(s.deleted) > 0 {
		s.Abort()
		return nil, false, errMixedWrites
	}
	if err := s.takeMaintErr(ctx); err != nil {
		return nil, false, err
	}
	cl := s.cl
	changed = cl.keys != nil && cl.keys.Len() > 0
	// Encoding below empties the builders: published reads this instead.
	s.changed = changed
	if !changed && !encode {
		return nil, false, nil
	}
	cl = s.builders()
	raw, err = encodeChangelog(s.p.opts.Allocator, cl.keys.NewBinaryArray(), cl.values.NewBinaryArray())
	if err != nil {
		s.Abort()
		return nil, false, fmt.Errorf("checkpoint: encode state changelog for %s: %w", s.p.dir, err)
	}
	return raw, changed, nil
}

// finishChangelog publishes version next of a changelog commit and leaves
// the partition without a decoded copy.
func (s *store) finishChangelog(next int64, file bool) {
	p, cl := s.p, s.cl
	p.mu.Lock()
	if !p.dataless {
		// The decoded copy goes: the operator holds the state. Its size
		// seeds the estimate that decides when a snapshot is due.
		p.estBytes = p.bytes
		p.data, p.bytes, p.dataless = nil, 0, true
		p.memBytes.Store(0)
	}
	p.estBytes += cl.upserted
	p.sinceSnap += cl.upserted + cl.deleted
	p.rows = max(cl.rows, 0)
	s.published(next, file) // releases the changelog
}

// encodeChangelog writes keys and values (null: deleted; both consumed)
// as one state file, in the format encodeState writes: their buffers
// copied as one chunk (a builder's arrays have 32-bit offsets, within a
// chunk's reach), into a recycled scratch body that compression then
// copies out.
func encodeChangelog(_ memory.Allocator, keys, values arrow.Array) ([]byte, error) {
	defer keys.Release()
	defer values.Release()
	scratch := stateScratch.Get().(*[]byte)
	defer stateScratch.Put(scratch)
	body := append((*scratch)[:0], stateColumnsMagic...)
	body = append(body, stateCodecStored)
	body = appendBinaryChunk(body, keys.(*array.Binary), values.(*array.Binary))
	*scratch = body[:0]
	return sealColumns(body)
}
