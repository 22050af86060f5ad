package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	"io"
)

// Carrier is a StatePartition that an epoch may leave unopened: when no
// operator reads or writes the partition in an epoch (no rows routed to
// it, nothing to evict), the engine carries its version forward with
// Carry instead of Begin and a commit. With group commit (GroupCommitter)
// an unchanged partition writes nothing anyway, and the state log record
// names only the partitions written, so a carried version is rebuilt on
// recovery exactly as an unchanged committed one: the newest snapshot plus
// the log entries of the versions that changed it.
type Carrier interface {
	StatePartition
	// Carry moves the partition from version from to from+1 for an epoch
	// that opened no store on it, when that is what a Begin(from) and a
	// commit without changes would leave, and returns its live keys.
	// rows is the live key count the operator declared for the epoch
	// (ChangelogWriter.SetLiveRows; negative: none). ok is false when the
	// partition needs a real Begin and commit instead: it does not hold
	// version from, it is not group-committed, maintenance is due, the
	// declared rows differ from what it holds, or a background error
	// must fail the commit. Carry does no I/O.
	Carry(from, rows int64) (live int64, ok bool)
	// LogsChanges reports whether the partition's stores are
	// ChangelogWriters.
	LogsChanges() bool
}

// LazyStore is the store an epoch hands an operator for a partition it
// may not touch: the partition's Begin runs at the first read or write,
// so an epoch costs nothing in partitions that receive no rows and evict
// nothing. The engine settles it after the operator ran (Settle): the
// store to commit when it was opened, else the partition's version is
// carried forward. A LazyStore is used by one goroutine at a time, as a
// StateStore is.
type LazyStore struct {
	part    StatePartition
	version int64
	st      StateStore // nil until the first use
	err     error      // the Begin that failed: every later call returns it
	rows    int64      // SetLiveRows before the store was opened (-1: none)
}

// LazyLogStore is a LazyStore over a partition whose stores are
// ChangelogWriters: it is one too, so that an operator's type assertion
// sees the same write path as with the store itself.
type LazyLogStore struct{ LazyStore }

var (
	_ StateStore      = (*LazyStore)(nil)
	_ MultiGetter     = (*LazyStore)(nil)
	_ ChangelogWriter = (*LazyLogStore)(nil)
	_ LiveBytesSetter = (*LazyLogStore)(nil)
	_ LiveBytesSetter = (*store)(nil)
)

// Reset points l at version of part, unopened (the engine reuses its
// handles from epoch to epoch).
func (l *LazyStore) Reset(part StatePartition, version int64) {
	*l = LazyStore{part: part, version: version, rows: -1}
}

// Opened reports whether the store was opened (Begin ran, successfully
// or not).
func (l *LazyStore) Opened() bool { return l.st != nil || l.err != nil }

// Open begins the partition's store now, as its first use would (the
// engine opens every partition of an epoch that must load them all, so
// that a failed load is the epoch's, before any operator runs).
func (l *LazyStore) Open() (StateStore, error) { return l.open() }

// open begins the partition's store at the first use.
func (l *LazyStore) open() (StateStore, error) {
	if l.st != nil || l.err != nil {
		return l.st, l.err
	}
	st, err := l.part.Begin(l.version)
	if err != nil {
		l.err = err
		return nil, err
	}
	l.st = st
	if l.rows >= 0 {
		if cw, ok := st.(ChangelogWriter); ok {
			cw.SetLiveRows(l.rows)
		}
	}
	return st, nil
}

// Settle ends the epoch's use of the handle: it returns the store to
// commit when the operator opened it (or when the partition cannot be
// carried: then it is opened now), else carries the partition to
// version+1 and returns nil and the partition's live keys. An error is
// the failed Begin; nothing is then open.
func (l *LazyStore) Settle() (StateStore, int64, error) {
	if !l.Opened() {
		if c, ok := l.part.(Carrier); ok {
			if live, ok := c.Carry(l.version, l.rows); ok {
				return nil, live, nil
			}
		}
	}
	st, err := l.open()
	if err != nil {
		return nil, 0, err
	}
	return st, int64(st.Len()), nil
}

// Store is the opened store (nil when not opened).
func (l *LazyStore) Store() StateStore { return l.st }

// Version implements StateStore without opening the store.
func (l *LazyStore) Version() int64 { return l.version }

// Get implements StateStore.
func (l *LazyStore) Get(key []byte) ([]byte, bool, error) {
	st, err := l.open()
	if err != nil {
		return nil, false, err
	}
	return st.Get(key)
}

// Put implements StateStore.
func (l *LazyStore) Put(key, value []byte) error {
	st, err := l.open()
	if err != nil {
		return err
	}
	return st.Put(key, value)
}

// Delete implements StateStore.
func (l *LazyStore) Delete(key []byte) error {
	st, err := l.open()
	if err != nil {
		return err
	}
	return st.Delete(key)
}

// Range implements StateStore.
func (l *LazyStore) Range(fn func(key, value []byte) bool) error {
	st, err := l.open()
	if err != nil {
		return err
	}
	return st.Range(fn)
}

// Scan implements StateStore.
func (l *LazyStore) Scan(fn func(key, value []byte) bool) error {
	st, err := l.open()
	if err != nil {
		return err
	}
	return st.Scan(fn)
}

// GetMany implements MultiGetter (in one pass when the store can).
func (l *LazyStore) GetMany(keys [][]byte, fn func(i int, value []byte)) error {
	st, err := l.open()
	if err != nil {
		return err
	}
	return GetMany(st, keys, fn)
}

// Len implements StateStore: the declared live rows when the store is
// not open and the operator declared them, else the store's.
func (l *LazyStore) Len() int {
	if !l.Opened() && l.rows >= 0 {
		return int(l.rows)
	}
	st, err := l.open()
	if err != nil {
		return 0 // the error fails Settle and Commit
	}
	return st.Len()
}

// Commit implements StateStore (the engine commits through Settle and its
// provider; this is the path of a caller without group commit).
func (l *LazyStore) Commit(ctx context.Context) (int64, error) {
	st, err := l.open()
	if err != nil {
		return 0, fmt.Errorf("checkpoint: commit state version %d: %w", l.version+1, err)
	}
	return st.Commit(ctx)
}

// Abort implements StateStore: an unopened store has nothing to discard.
func (l *LazyStore) Abort() {
	if l.st != nil {
		l.st.Abort()
	}
}

// LogUpsert implements ChangelogWriter. A failed Begin is kept and fails
// the commit (Settle), as a store's own failed read does.
func (l *LazyLogStore) LogUpsert(key, value []byte) {
	if st, err := l.open(); err == nil {
		st.(ChangelogWriter).LogUpsert(key, value)
	}
}

var _ ChangelogDeferrer = (*LazyLogStore)(nil)

// LogUpsertDeferred implements ChangelogDeferrer, as LogUpsert does: a
// failed Begin is kept and fails the commit (v is released at once); a
// store that does not defer gets v's bytes filled now.
func (l *LazyLogStore) LogUpsertDeferred(key []byte, v DeferredValue) error {
	st, err := l.open()
	if err != nil {
		v.Release()
		return nil
	}
	if cd, ok := st.(ChangelogDeferrer); ok {
		return cd.LogUpsertDeferred(key, v)
	}
	defer v.Release()
	buf := make([]byte, v.Len())
	v.Fill(buf)
	st.(ChangelogWriter).LogUpsert(key, buf)
	return nil
}

var _ ChangelogStreamer = (*LazyLogStore)(nil)

// LogUpsertFrom implements ChangelogStreamer, as LogUpsert does: a failed
// Begin is kept and fails the commit; write is not called then.
func (l *LazyLogStore) LogUpsertFrom(key []byte, size int, write func(w io.Writer) error) error {
	st, err := l.open()
	if err != nil {
		return nil
	}
	if cs, ok := st.(ChangelogStreamer); ok {
		return cs.LogUpsertFrom(key, size, write)
	}
	var buf bytes.Buffer
	buf.Grow(size)
	if err := write(&buf); err != nil {
		return err
	}
	st.(ChangelogWriter).LogUpsert(key, buf.Bytes())
	return nil
}

var _ ChangelogBatcher = (*LazyLogStore)(nil)

// LogUpserts implements ChangelogBatcher (entry by entry when the opened
// store does not batch).
func (l *LazyLogStore) LogUpserts(keys []byte, keyEnds []uint32, values []byte, valueEnds []uint32) {
	st, err := l.open()
	if err != nil {
		return
	}
	if b, ok := st.(ChangelogBatcher); ok {
		b.LogUpserts(keys, keyEnds, values, valueEnds)
		return
	}
	cw := st.(ChangelogWriter)
	var k, v uint32
	for i, ke := range keyEnds {
		cw.LogUpsert(keys[k:ke], values[v:valueEnds[i]])
		k, v = ke, valueEnds[i]
	}
}

// LogDeletes implements ChangelogBatcher, as LogUpserts.
func (l *LazyLogStore) LogDeletes(keys []byte, keyEnds []uint32) {
	st, err := l.open()
	if err != nil {
		return
	}
	if b, ok := st.(ChangelogBatcher); ok {
		b.LogDeletes(keys, keyEnds)
		return
	}
	cw := st.(ChangelogWriter)
	var k uint32
	for _, ke := range keyEnds {
		cw.LogDelete(keys[k:ke])
		k = ke
	}
}

// LogUpsertsOf implements ChangelogBatcher, as LogUpserts.
func (l *LazyLogStore) LogUpsertsOf(n int, entries ChangelogEntries) int {
	st, err := l.open()
	if err != nil {
		return 0
	}
	if b, ok := st.(ChangelogBatcher); ok {
		return b.LogUpsertsOf(n, entries)
	}
	cw, bytes := st.(ChangelogWriter), 0
	for i := range n {
		k, v := entries.Entry(i)
		cw.LogUpsert(k, v)
		bytes += len(k) + len(v)
	}
	return bytes
}

// LogDeletesOf implements ChangelogBatcher, as LogDeletes.
func (l *LazyLogStore) LogDeletesOf(n int, entries ChangelogEntries) int {
	st, err := l.open()
	if err != nil {
		return 0
	}
	if b, ok := st.(ChangelogBatcher); ok {
		return b.LogDeletesOf(n, entries)
	}
	cw, bytes := st.(ChangelogWriter), 0
	for i := range n {
		k, _ := entries.Entry(i)
		cw.LogDelete(k)
		bytes += len(k)
	}
	return bytes
}

// LogDelete implements ChangelogWriter.
func (l *LazyLogStore) LogDelete(key []byte) {
	if st, err := l.open(); err == nil {
		st.(ChangelogWriter).LogDelete(key)
	}
}

// SetLiveRows implements ChangelogWriter without opening the store: an
// epoch declares every partition's rows, and most change nothing.
func (l *LazyLogStore) SetLiveRows(n int64) {
	if l.st != nil {
		l.st.(ChangelogWriter).SetLiveRows(n)
		return
	}
	l.rows = n
}

// SetLiveBytes implements LiveBytesSetter. An unopened store changed
// nothing this epoch: the partition keeps the bytes declared when it last
// changed.
func (l *LazyLogStore) SetLiveBytes(n int64) {
	if ls, ok := l.st.(LiveBytesSetter); ok {
		ls.SetLiveBytes(n)
	}
}

var _ Carrier = (*StorePartition)(nil)

// LogsChanges implements Carrier: its stores are ChangelogWriters.
func (p *StorePartition) LogsChanges() bool { return true }

// Carry implements Carrier. A group-committed partition's unchanged
// version writes nothing, so carrying it is publishing from+1 without
// the store: what published does for a store without changes, when no
// maintenance is due.
func (p *StorePartition) Carry(from, rows int64) (int64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.glog == nil || p.busy || p.version != from || p.maintErr != nil {
		return 0, false
	}
	if !p.maintRunning && p.maintenanceDue(from+1, false) {
		return 0, false
	}
	live := int64(len(p.data))
	if p.dataless {
		live = p.rows
	}
	if rows >= 0 && (!p.dataless || rows != live) {
		// A declared count the partition does not hold: the commit's
		// changelog path records it (and drops a decoded copy).
		return 0, false
	}
	p.version = from + 1
	return live, true
}

var _ LiveSnapshotter = (*LazyLogStore)(nil)

// WantsLiveSnapshot implements LiveSnapshotter: an unopened partition
// (no change in this epoch) makes no snapshot due, and wants no view.
func (l *LazyLogStore) WantsLiveSnapshot() bool {
	if ls, ok := l.st.(LiveSnapshotter); ok && l.err == nil {
		return ls.WantsLiveSnapshot()
	}
	return false
}

// SetLiveSnapshot implements LiveSnapshotter: the view goes to the opened
// store; without one it is released.
func (l *LazyLogStore) SetLiveSnapshot(v LiveView) {
	if ls, ok := l.st.(LiveSnapshotter); ok && l.err == nil {
		ls.SetLiveSnapshot(v)
		return
	}
	v.Release()
}
