package checkpoint

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
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

// LiveBytesSetter is implemented by the ChangelogWriters whose partition
// decides its snapshots on the bytes of live state an operator declares.
// An operator that knows about how many key and value bytes its live
// entries hold (a join: its live batches, each one stored entry) declares
// them each epoch it changes the partition; the partition then writes a
// snapshot only when a load would replay at least twice those bytes
// (snapshotDue), so a state that only grows, whose log since the last
// snapshot is all live, is never rewritten whole to save no replay.
type LiveBytesSetter interface {
	// SetLiveBytes declares the key and value bytes of the entries the
	// partition holds after this epoch (an estimate within a few percent
	// serves: it is compared with a factor of two).
	SetLiveBytes(n int64)
}

// ChangelogStreamer is implemented by the ChangelogWriters that take a
// value written by the caller straight into the epoch's changelog: an
// operator whose value is an encoding it would otherwise write into a
// buffer of its own for LogUpsert to copy (a join's batch, its rows as an
// Arrow IPC stream of megabytes) writes it once.
type ChangelogStreamer interface {
	// LogUpsertFrom records that key holds, after this epoch, the bytes
	// write writes to w (size: about how many, to reserve them). When
	// write fails, nothing is recorded and its error is returned.
	LogUpsertFrom(key []byte, size int, write func(w io.Writer) error) error
}

// ChangelogDeferrer is implemented by the ChangelogWriters that take a
// value the caller writes when the epoch's changelog is encoded, straight
// into the record that holds it: a join batch viewing its epoch's input
// (its rows an Arrow IPC stream gathered through a selection) is written
// once, at the commit, instead of into the changelog's arena first and
// copied from there into the state log's record.
type ChangelogDeferrer interface {
	// LogUpsertDeferred records that key holds, after this epoch, the
	// bytes v fills. The store takes v: it calls v.Release exactly once,
	// when it no longer needs it (after the epoch's commit or abort, or
	// at once when the store has failed).
	LogUpsertDeferred(key []byte, v DeferredValue) error
}

// DeferredValue is a logged value whose bytes are written when the
// changelog is encoded (ChangelogDeferrer); what it reads stays unchanged
// until Release.
type DeferredValue interface {
	// Len is the value's length in bytes.
	Len() int
	// Fill writes the value into dst (Len bytes long, stale contents):
	// the same bytes on every call.
	Fill(dst []byte)
	// Release ends the store's use of the value.
	Release()
}

// ChangelogBatcher is implemented by the ChangelogWriters that take many
// changes in one call: an operator that logs thousands of keys an epoch
// (a windowed aggregation's changed and evicted groups) gathers a
// partition's entries end to end and hands them at once, instead of an
// interface call, a reservation and five appends per key. The effect is
// that of LogUpsert (LogDelete) called for each entry in order; the
// bytes are copied.
type ChangelogBatcher interface {
	// LogUpserts records len(keyEnds) upserts: entry i's key is
	// keys[keyEnds[i-1]:keyEnds[i]] and its value
	// values[valueEnds[i-1]:valueEnds[i]] (from 0 for the first).
	// keyEnds and valueEnds have the same length and do not decrease.
	LogUpserts(keys []byte, keyEnds []uint32, values []byte, valueEnds []uint32)
	// LogDeletes records len(keyEnds) deletes, keys as in LogUpserts.
	LogDeletes(keys []byte, keyEnds []uint32)
	// LogUpsertsOf records n upserts, the i-th's key and value those
	// entries.Entry(i) returns, and returns their bytes (keys and
	// values). The bytes are copied once, straight into the log: a
	// caller whose keys and values lie apart (an aggregation's kept
	// store keys and its value rows) does not gather them end to end
	// first, which copied every byte once more into a buffer of its own
	// (fresh memory the first epochs, and each time an epoch outgrew
	// it). Entry is called twice for each i, for the sizes and then the
	// bytes, and must return the same views both times.
	LogUpsertsOf(n int, entries ChangelogEntries) int
	// LogDeletesOf records n deletes, the keys entries.Entry returns
	// (their values are ignored), and returns the keys' bytes, as
	// LogUpsertsOf.
	LogDeletesOf(n int, entries ChangelogEntries) int
}

// ChangelogEntries is a batch of changes by number, for LogUpsertsOf and
// LogDeletesOf: an interface, not a callback, so that a caller can hand
// a long-lived value every epoch without allocating one.
type ChangelogEntries interface {
	// Entry returns the i-th change's key and value (views, not kept).
	Entry(i int) (key, value []byte)
}

// EntriesFunc is a ChangelogEntries of a function.
type EntriesFunc func(i int) (key, value []byte)

// Entry implements ChangelogEntries.
func (f EntriesFunc) Entry(i int) ([]byte, []byte) { return f(i) }

// changelog is one epoch's logged changes: keys with their value (a
// delete has none), in log order, appended to byte arenas in the layout
// of a state file's chunk (statecolumns.go), so that the commit writes
// them with one copy into the delta, without an Arrow builder per column
// (whose doubling growth copied every byte again) or the arrays it made.
// The arenas belong to the partition and serve its next epochs (an
// epoch's changelog is most of its allocations otherwise).
type changelog struct {
	arena *changeArena // nil until the first change
	rows  int64        // live keys after the epoch (SetLiveRows)
	// liveBytes is the live entries' bytes after the epoch
	// (SetLiveBytes; negative: not declared).
	liveBytes int64
	// upserted and deleted are the key and value bytes of the upserts
	// and the key bytes of the deletes.
	upserted, deleted int64
}

// changeArena holds a changelog's entries: key and value bytes, the end
// offset of each entry's key and value, and a validity bit per entry
// (clear: deleted).
//
// A deferred value (ChangelogDeferrer) holds no bytes in values: it is
// written where it stands among them (at) when the arena is encoded, and
// the entries' value ends count its bytes.
type changeArena struct {
	keys, values []byte
	koff, voff   []uint32
	valid        []byte
	defers       []deferredAt
	deferred     int // bytes of the deferred values
}

// deferredAt is a deferred value written before values[at:].
type deferredAt struct {
	at int
	v  DeferredValue
}

func (a *changeArena) len() int { return len(a.koff) }

// valuesLen is the length of the encoded values, deferred ones included.
func (a *changeArena) valuesLen() int { return len(a.values) + a.deferred }

func (a *changeArena) reset() {
	a.releaseDeferred()
	a.keys, a.values = a.keys[:0], a.values[:0]
	a.koff, a.voff, a.valid = a.koff[:0], a.voff[:0], a.valid[:0]
}

// releaseDeferred releases the deferred values (the entries that end
// with them are no longer encodable: reset follows).
func (a *changeArena) releaseDeferred() {
	for i := range a.defers {
		a.defers[i].v.Release()
	}
	clear(a.defers)
	a.defers, a.deferred = a.defers[:0], 0
}

// addDeferred adds an entry whose value v is written at encoding.
func (a *changeArena) addDeferred(key []byte, v DeferredValue, n int) {
	a.defers = append(a.defers, deferredAt{at: len(a.values), v: v})
	a.deferred += n
	a.addKey(key, true)
}

// appendValues appends the entries' values, the deferred ones filled in
// place (dst's capacity reserved by the caller serves them).
func (a *changeArena) appendValues(dst []byte) []byte {
	pos := 0
	for _, d := range a.defers {
		dst = append(dst, a.values[pos:d.at]...)
		n := d.v.Len()
		start := len(dst)
		dst = slices.Grow(dst, n)[:start+n]
		d.v.Fill(dst[start:])
		pos = d.at
	}
	return append(dst, a.values[pos:]...)
}

func (a *changeArena) add(key, value []byte, live bool) {
	a.values = append(a.values, value...)
	a.addKey(key, live)
}

// addKey ends an entry whose value is the bytes appended to values since
// the previous entry.
func (a *changeArena) addKey(key []byte, live bool) {
	i := len(a.koff)
	if i%8 == 0 {
		a.valid = append(a.valid, 0)
	}
	if live {
		a.valid[i/8] |= 1 << (i % 8)
	}
	a.keys = append(a.keys, key...)
	a.koff = append(a.koff, uint32(len(a.keys)))
	a.voff = append(a.voff, uint32(a.valuesLen()))
}

// addBatch adds entries whose keys and values are end to end in keys and
// values, bounded by the ends (values nil: deletes, each without a
// value; see ChangelogBatcher).
func (a *changeArena) addBatch(keys []byte, keyEnds []uint32, values []byte, valueEnds []uint32, live bool) {
	i0 := len(a.koff)
	n := len(keyEnds)
	kbase, vbase := uint32(len(a.keys)), uint32(a.valuesLen())
	a.keys = append(a.keys, keys...)
	a.values = append(a.values, values...)
	a.koff = slices.Grow(a.koff, n)
	for _, e := range keyEnds {
		a.koff = append(a.koff, kbase+e)
	}
	a.voff = slices.Grow(a.voff, n)
	if valueEnds == nil {
		for range n {
			a.voff = append(a.voff, vbase)
		}
	} else {
		for _, e := range valueEnds {
			a.voff = append(a.voff, vbase+e)
		}
	}
	a.markValid(i0, n, live)
}

// addEntries adds n entries, entry i's key and value those
// entries.Entry(i) returns, with keyBytes and valueBytes their total sizes: the arena
// grows once for them and each is copied once.
func (a *changeArena) addEntries(n, keyBytes, valueBytes int, entries ChangelogEntries, live bool) {
	i0 := len(a.koff)
	keys, values := growArena(a.keys, keyBytes), growArena(a.values, valueBytes)
	koff, voff := slices.Grow(a.koff, n)[:i0+n], slices.Grow(a.voff, n)[:i0+n]
	for i := range n {
		k, v := entries.Entry(i)
		keys = append(keys, k...)
		values = append(values, v...)
		koff[i0+i] = uint32(len(keys))
		voff[i0+i] = uint32(len(values) + a.deferred)
	}
	a.keys, a.values, a.koff, a.voff = keys, values, koff, voff
	a.markValid(i0, n, live)
}

// addKeys is addEntries for n deletes: the entries' keys, no values.
func (a *changeArena) addKeys(n, keyBytes int, entries ChangelogEntries) {
	i0 := len(a.koff)
	keys := growArena(a.keys, keyBytes)
	koff, voff := slices.Grow(a.koff, n)[:i0+n], slices.Grow(a.voff, n)[:i0+n]
	vend := uint32(a.valuesLen())
	for i := range n {
		k, _ := entries.Entry(i)
		keys = append(keys, k...)
		koff[i0+i] = uint32(len(keys))
		voff[i0+i] = vend
	}
	a.keys, a.koff, a.voff = keys, koff, voff
	a.markValid(i0, n, false)
}

// markValid extends the validity bits over the n entries from i0, set
// when live.
func (a *changeArena) markValid(i0, n int, live bool) {
	for len(a.valid)*8 < i0+n {
		a.valid = append(a.valid, 0)
	}
	if live {
		for i := i0; i < i0+n; i++ {
			a.valid[i/8] |= 1 << (i % 8)
		}
	}
}

// appendChunk appends the entries as one chunk of a state file body.
func (a *changeArena) appendChunk(dst []byte) []byte {
	n := a.len()
	if n == 0 {
		return dst
	}
	dst = slices.Grow(dst, 12+8*(n+1)+len(a.valid)+len(a.keys)+a.valuesLen())
	dst = appendChunkHeader(dst, n, len(a.keys), a.valuesLen())
	for _, offs := range [][]uint32{a.koff, a.voff} {
		dst = binary.LittleEndian.AppendUint32(dst, 0)
		for _, o := range offs {
			dst = binary.LittleEndian.AppendUint32(dst, o)
		}
	}
	dst = append(dst, a.valid...)
	dst = append(dst, a.keys...)
	return a.appendValues(dst)
}

// maxKeptArena: a partition keeps an arena over this size between epochs
// only while its epochs use a quarter of it, so that a rare large epoch's
// buffers are not held for good while steady large epochs reuse theirs.
const maxKeptArena = 1 << 20

var _ ChangelogWriter = (*store)(nil)

func (s *store) changes() *changelog {
	if s.cl == nil {
		// In the store: every partition of a changelog operator sets its
		// live rows every epoch, and a changelog of its own was one of
		// the two allocations per partition of an empty epoch.
		s.clBuf = changelog{rows: -1, liveBytes: -1}
		s.cl = &s.clBuf
	}
	return s.cl
}

// arena returns the changelog with its arena taken from the partition
// (the store is the partition's only open one).
func (s *store) arena() *changelog {
	cl := s.changes()
	if cl.arena == nil {
		if s.p.arena == nil {
			s.p.arena = &changeArena{}
		}
		cl.arena = s.p.arena
		cl.arena.reset()
		// The capacity kept from earlier epochs is reserved by the
		// engine's store account: only growth past it is the epoch's.
		s.acct.held -= cl.arena.capBytes()
	}
	return cl
}

// LogUpsert implements ChangelogWriter.
func (s *store) LogUpsert(key, value []byte) {
	cl := s.arena()
	s.arenaGrew(int64(len(key)+len(value)) + arenaEntryBytes)
	cl.arena.add(key, value, true)
	cl.upserted += int64(len(key) + len(value))
}

// arenaGrew reserves n more bytes logged in the epoch's arena (past the
// capacity it kept, which the engine reserves after each commit). A
// refusal fails the commit: the log calls return no error, and the
// allocator has stopped the query.
func (s *store) arenaGrew(n int64) error {
	if s.acct.reserve == nil {
		return nil
	}
	err := s.acct.grow(n)
	if err != nil {
		err = fmt.Errorf("checkpoint: log into state %s: %w", s.p.dir, err)
		if s.err == nil {
			s.err = err
		}
	}
	return err
}

var _ ChangelogBatcher = (*store)(nil)

// LogUpserts implements ChangelogBatcher.
func (s *store) LogUpserts(keys []byte, keyEnds []uint32, values []byte, valueEnds []uint32) {
	n := len(keyEnds)
	if n == 0 {
		return
	}
	kb, vb := int(keyEnds[n-1]), int(valueEnds[n-1])
	cl := s.arena()
	s.arenaGrew(int64(kb+vb) + int64(n)*arenaEntryBytes)
	cl.arena.addBatch(keys[:kb], keyEnds, values[:vb], valueEnds, true)
	cl.upserted += int64(kb + vb)
}

// LogDeletes implements ChangelogBatcher.
func (s *store) LogDeletes(keys []byte, keyEnds []uint32) {
	n := len(keyEnds)
	if n == 0 {
		return
	}
	kb := int(keyEnds[n-1])
	cl := s.arena()
	s.arenaGrew(int64(kb) + int64(n)*arenaEntryBytes)
	cl.arena.addBatch(keys[:kb], keyEnds, nil, nil, false)
	cl.deleted += int64(kb)
}

// LogUpsertsOf implements ChangelogBatcher.
func (s *store) LogUpsertsOf(n int, entries ChangelogEntries) int {
	if n == 0 {
		return 0
	}
	kb, vb := 0, 0
	for i := range n {
		k, v := entries.Entry(i)
		kb += len(k)
		vb += len(v)
	}
	cl := s.arena()
	s.arenaGrew(int64(kb+vb) + int64(n)*arenaEntryBytes)
	cl.arena.addEntries(n, kb, vb, entries, true)
	cl.upserted += int64(kb + vb)
	return kb + vb
}

// LogDeletesOf implements ChangelogBatcher.
func (s *store) LogDeletesOf(n int, entries ChangelogEntries) int {
	if n == 0 {
		return 0
	}
	kb := 0
	for i := range n {
		k, _ := entries.Entry(i)
		kb += len(k)
	}
	cl := s.arena()
	s.arenaGrew(int64(kb) + int64(n)*arenaEntryBytes)
	cl.arena.addKeys(n, kb, entries)
	cl.deleted += int64(kb)
	return kb
}

var _ ChangelogStreamer = (*store)(nil)

// arenaValues appends what is written to an arena's values.
type arenaValues struct{ a *changeArena }

func (w arenaValues) Write(p []byte) (int, error) {
	w.a.values = append(growArena(w.a.values, len(p)), p...)
	return len(p), nil
}

// growArena returns b with room for n more bytes. A partition's arena
// is kept across epochs (releaseChangelog), so it grows with a quarter
// to spare, for the next epochs of about the same size to fit, and only
// b's bytes are copied: slices.Grow (and append) copied the old array's
// whole capacity, stale bytes past len(b) included, and zeroed the new
// array's rest, touching fresh pages an epoch may never fill — on a
// join's first epochs, a partition's arena grew three times by 1.25×.
func growArena(b []byte, n int) []byte {
	if n <= cap(b)-len(b) {
		return b
	}
	need := len(b) + n
	nb := make([]byte, len(b), need+need/4)
	copy(nb, b)
	return nb
}

// Extend lends the next n bytes of the arena's values to a writer that
// fills them itself (an encoder gathering rows straight into the log
// instead of into a buffer it then writes); their old contents are
// whatever the reused arena held, so the caller writes all n.
func (w arenaValues) Extend(n int) []byte {
	start := len(w.a.values)
	w.a.values = growArena(w.a.values, n)[:start+n]
	return w.a.values[start : start+n]
}

// LogUpsertFrom implements ChangelogStreamer: the value is written at the
// end of the arena's values, then its key is added.
func (s *store) LogUpsertFrom(key []byte, size int, write func(w io.Writer) error) error {
	cl := s.arena()
	a := cl.arena
	start := len(a.values)
	a.values = growArena(a.values, max(size, 0))
	if err := write(arenaValues{a}); err != nil {
		a.values = a.values[:start]
		return err
	}
	a.addKey(key, true)
	cl.upserted += int64(len(key) + len(a.values) - start)
	return s.arenaGrew(int64(len(key)+len(a.values)-start) + arenaEntryBytes)
}

var _ ChangelogDeferrer = (*store)(nil)

// LogUpsertDeferred implements ChangelogDeferrer: the arena keeps v, not
// its bytes, until the commit encodes the changelog (appendChunk), and
// releases it with the epoch's changelog (releaseChangelog).
func (s *store) LogUpsertDeferred(key []byte, v DeferredValue) error {
	cl := s.arena()
	n := v.Len()
	cl.arena.addDeferred(key, v, n)
	cl.upserted += int64(len(key) + n)
	// The value's bytes are the caller's (held by it until Release),
	// not the arena's: only the entry is reserved.
	return s.arenaGrew(int64(len(key)) + arenaEntryBytes)
}

// LogDelete implements ChangelogWriter.
func (s *store) LogDelete(key []byte) {
	cl := s.arena()
	s.arenaGrew(int64(len(key)) + arenaEntryBytes)
	cl.arena.add(key, nil, false)
	cl.deleted += int64(len(key))
}

// SetLiveRows implements ChangelogWriter.
func (s *store) SetLiveRows(n int64) { s.changes().rows = n }

// SetLiveBytes implements LiveBytesSetter.
func (s *store) SetLiveBytes(n int64) { s.changes().liveBytes = n }

// releaseChangelog ends the epoch's changelog; the partition keeps the
// arena for its next epochs (see maxKeptArena).
func (s *store) releaseChangelog() {
	if s.cl != nil && s.cl.arena != nil {
		a := s.cl.arena
		a.releaseDeferred()
		// Only the partition's open store uses the arena (one at a
		// time): no lock, and callers may hold p.mu.
		used := len(a.keys) + len(a.values) + 4*(len(a.koff)+len(a.voff))
		held := cap(a.keys) + cap(a.values) + 4*(cap(a.koff)+cap(a.voff))
		if held > maxKeptArena && used < held/4 {
			if s.p.arena == a {
				s.p.arena = nil
				s.p.arenaBytes.Store(0)
			}
		} else {
			a.reset()
			s.p.arenaBytes.Store(int64(held))
		}
	}
	s.cl = nil
	if s.live != nil {
		// Not published (an abort, or a commit that wrote no
		// changelog): the view describes no version of the partition.
		s.live.Release()
		s.live = nil
	}
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
	changed, err = s.checkChangelog(ctx)
	if err != nil || !changed && !encode {
		return nil, changed, err
	}
	raw, err = encodeChangelog(s.arena().arena)
	if err != nil {
		s.Abort()
		return nil, false, fmt.Errorf("checkpoint: encode state changelog for %s: %w", s.p.dir, err)
	}
	return raw, changed, nil
}

// checkChangelog checks that the store can commit its changelog and
// reports whether it logged any change. On error the store is aborted.
func (s *store) checkChangelog(ctx context.Context) (changed bool, err error) {
	if s.err != nil {
		err := s.err
		s.Abort()
		return false, err
	}
	if len(s.pending) > 0 || len(s.deleted) > 0 {
		s.Abort()
		return false, errMixedWrites
	}
	if err := s.takeMaintErr(ctx); err != nil {
		return false, err
	}
	cl := s.cl
	s.changed = cl.arena != nil && cl.arena.len() > 0
	return s.changed, nil
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
		p.liveBytesKnown = false
	}
	p.estBytes += cl.upserted
	p.sinceSnap += cl.upserted + cl.deleted
	p.rows = max(cl.rows, 0)
	if cl.liveBytes >= 0 {
		p.liveBytes, p.liveBytesKnown = cl.liveBytes, true
	}
	if s.live != nil {
		p.setLive(next, s.live)
		s.live = nil
	}
	s.published(next, file) // releases the changelog
}

// encodeChangelog writes the arena's entries as one state file, in the
// format encodeState writes (one chunk, compressed when large): the delta
// file of a changelog partition committed on its own (<version>.delta).
// A group commit appends the entries straight into the state log's
// record instead (appendDelta).
func encodeChangelog(a *changeArena) ([]byte, error) {
	scratch := getScratch()
	defer putScratch(scratch)
	body := append(scratch.b[:0], stateColumnsMagic...)
	body = append(body, stateCodecStored)
	body = a.appendChunk(body)
	scratch.b = body[:0]
	return sealColumns(body)
}

// appendDelta appends the arena's entries as one sealed state file to dst,
// stored (not compressed), written once from the arena into dst: the
// epoch's record in the log holds it with no other copy. It reads as
// encodeChangelog's file does (byte for byte when that one is stored too).
//
// Not compressed, by measurement (BenchmarkChangelogCodec, 20 to 20,000
// rows): S2 costs 6 to 65 times the CPU of storing a changelog's chunk
// (checksum included) and shrinks it by only 12% for rows a join keeps
// (generated strings) and by 26-35% for an aggregation's groups; zstd's
// fastest level shrinks them by 30-60% at 4 to 8 times S2's CPU, and LZ4
// does no better than S2. A log record lives
// only until the partition's next snapshot (which compresses), so the
// bytes it saves are short-lived while its CPU is spent every epoch.
func (a *changeArena) appendDelta(dst []byte, sums *crcSpans) []byte {
	start := len(dst)
	dst = slices.Grow(dst, a.deltaLen())
	dst = append(dst, stateColumnsMagic...)
	dst = append(dst, stateCodecStored)
	dst = a.appendChunk(dst)
	return stateTrailerFrom(dst, start, sums)
}

// deltaLen is the length of what appendDelta appends.
func (a *changeArena) deltaLen() int {
	n := 5 + 8 // magic and codec, trailer
	if a.len() > 0 {
		n += 12 + 8*(a.len()+1) + len(a.valid) + len(a.keys) + a.valuesLen()
	}
	return n
}
