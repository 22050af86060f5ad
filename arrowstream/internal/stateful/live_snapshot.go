package stateful

import (
	"context"
	"encoding/binary"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// Snapshots from the operators' live state (checkpoint.LiveSnapshotter):
// at the end of an epoch whose commit makes a snapshot due, an operator
// hands the partitions that ask an immutable view of their state as the
// epoch leaves it, and the stores' background maintenance writes the
// snapshot from it instead of folding the state log's deltas. The view
// is taken cheaply on the epoch's path (a copy of the aggregation's
// accumulators as one Arrow record, the deduplication's key list); its
// encoding into state rows runs in the background, in the first
// partition's maintenance that reads it.

// wantsLive returns, by partition, whether its store asks for a live
// view (nil when none does, or the stores do not take changelogs).
func wantsLive(stores []checkpoint.StateStore) []bool {
	var want []bool
	for p, st := range stores {
		ls, ok := st.(checkpoint.LiveSnapshotter)
		if !ok || !ls.WantsLiveSnapshot() {
			continue
		}
		if want == nil {
			want = make([]bool, len(stores))
		}
		want[p] = true
	}
	return want
}

// recordSnapshot is an operator's state as the rows of one Arrow record
// (the key columns and the value columns a rowCodec pair encodes), shared
// by the views of the partitions that asked: the first view read encodes
// every row once and routes it to its partition; the last one released
// frees the record. The codecs are the snapshot's own (the operator's
// are in use by the next epoch).
type recordSnapshot struct {
	rec      arrow.Record
	key, val *rowCodec
	scheme   partitioning
	want     []bool

	once sync.Once
	err  error
	rows [][]int32 // by partition: its rows of rec (wanted ones only)
	refs atomic.Int32
	// hold reserves, on the table's account, the encoders' buffers and
	// the rows once encoded, until the last view is released (the
	// record's Arrow buffers count through their allocator).
	hold *viewHold
}

// offerRecordSnapshot hands the partitions in want (wantsLive) a view of
// rec (owned by the snapshot from now on). key and val are codecs like
// the operator's (same columns, same partitioning hash keys), the
// snapshot's own. views reserves what the encoding holds.
func offerRecordSnapshot(stores []checkpoint.StateStore, want []bool, rec arrow.Record, key, val *rowCodec, scheme partitioning, views viewAccount) {
	hold, _ := views.hold(0) // nothing yet: encode reserves
	s := &recordSnapshot{rec: rec, key: key, val: val, scheme: scheme, want: want, hold: hold}
	n := int32(0)
	for _, w := range want {
		if w {
			n++
		}
	}
	s.refs.Store(n)
	if n == 0 {
		rec.Release()
		return
	}
	for p, w := range want {
		if w {
			stores[p].(checkpoint.LiveSnapshotter).SetLiveSnapshot(&recordView{s: s, part: p})
		}
	}
}

// snapshotCodecs returns fresh codecs for a recordSnapshot of rows in
// schema, with c's and v's columns and c's partitioning hash keys.
func snapshotCodecs(mem memory.Allocator, schema *arrow.Schema, c, v *rowCodec) (*rowCodec, *rowCodec, error) {
	key, err := newRowCodec(mem, schema, c.cols)
	if err != nil {
		return nil, nil, err
	}
	key.hashKeys = c.hashKeys
	val, err := newValueCodec(mem, schema, v.cols)
	if err != nil {
		return nil, nil, err
	}
	return key, val, nil
}

// encode encodes every row and routes the wanted ones to their
// partitions (once, by the first view read).
func (s *recordSnapshot) encode() {
	if err := s.key.encode(s.rec); err != nil {
		s.err = err
		return
	}
	if err := s.val.encode(s.rec); err != nil {
		s.err = err
		return
	}
	s.rows = make([][]int32, len(s.want))
	n := len(s.want)
	for i := 0; i < int(s.rec.NumRows()); i++ {
		if p := s.scheme.of(s.key, i, n); s.want[p] {
			s.rows[p] = append(s.rows[p], int32(i))
		}
	}
	held := s.key.enc.HeapBytes() + s.val.enc.HeapBytes()
	for _, r := range s.rows {
		held += int64(cap(r)) * 4
	}
	s.err = s.hold.add(held)
}

// recordView is one partition's view of a recordSnapshot.
type recordView struct {
	s    *recordSnapshot
	part int
	done atomic.Bool
}

// Entries implements checkpoint.LiveView. Views of several partitions
// may be read at once (the stores' maintenance workers): after the
// shared encode, they only read the codecs.
func (v *recordView) Entries(_ context.Context, emit func(key, value []byte) error) error {
	s := v.s
	s.once.Do(s.encode)
	if s.err != nil {
		return s.err
	}
	var kb, vb [9]byte
	for _, i := range s.rows[v.part] {
		if err := emit(s.key.bytesAt(int(i), &kb), s.val.bytesAt(int(i), &vb)); err != nil {
			return err
		}
	}
	return nil
}

// Release implements checkpoint.LiveView.
func (v *recordView) Release() {
	if !v.done.CompareAndSwap(false, true) {
		return
	}
	if v.s.refs.Add(-1) == 0 {
		v.s.rec.Release()
		v.s.key.enc.Release()
		v.s.val.enc.Release()
		v.s.rows = nil
		v.s.hold.release()
	}
}

// bytesAt is at without the codec's scratch buffer: a fixed-width row is
// written into buf (so that views of several partitions read one codec
// at once).
func (c *rowCodec) bytesAt(i int, buf *[9]byte) []byte {
	if len(c.cols) == 0 {
		return []byte{}
	}
	if !c.enc.IsFixed() {
		return c.enc.Key(i)
	}
	if c.enc.HasNull(i) {
		buf[0] = 0
		return buf[:1]
	}
	buf[0] = 1
	binary.LittleEndian.PutUint64(buf[1:], c.enc.Fixed()[i])
	return buf[:]
}

// keyedSnapshot is an aggregation's state as its groups' kept store keys
// (stateful_agg_keys.go) and their value columns, shared as a
// recordSnapshot is: when every group a snapshot takes has its store key
// and partition kept, as a windowed aggregation's groups do from their
// first change, the key columns are neither rebuilt from the groups nor
// encoded and hashed again (a group's kept key is the key codec's bytes
// and its partition the scheme's of them). The keys are copied, since
// the next epoch renumbers and overwrites the arena; the values are
// encoded in the background, by the first view read.
type keyedSnapshot struct {
	arena []byte    // the groups' keys end to end, in row order
	ends  []uint32  // by row: its key's end in arena (start: the row before's end)
	rows  [][]int32 // by partition: its rows (wanted ones only)
	vals  []arrow.Array
	val   *rowCodec

	once sync.Once
	err  error
	refs atomic.Int32
	hold *viewHold
}

// offerKeyedSnapshot hands the partitions in want (wantsLive) a view of
// the groups gids, whose store keys and partitions l keeps
// (aggLive.allStored), with vals their value columns in the order of
// gids (owned by the snapshot from now on) and val a value codec like the
// operator's, the snapshot's own. views reserves what the snapshot
// holds.
func offerKeyedSnapshot(stores []checkpoint.StateStore, want []bool, l *aggLive, gids []int32, vals []arrow.Array, val *rowCodec, views viewAccount) error {
	release := func() {
		for _, a := range vals {
			a.Release()
		}
		val.enc.Release()
	}
	n := 0
	for _, g := range gids {
		key, _, _ := l.storedKey(g)
		n += len(key)
	}
	s := &keyedSnapshot{arena: make([]byte, 0, n), ends: make([]uint32, len(gids)), rows: make([][]int32, len(want)), vals: vals, val: val}
	counts := make([]int, len(want))
	for _, g := range gids {
		counts[l.partOf[g]-1]++
	}
	for p, c := range counts {
		if want[p] && c > 0 {
			s.rows[p] = make([]int32, 0, c)
		}
	}
	for i, g := range gids {
		key, p, _ := l.storedKey(g)
		s.arena = append(s.arena, key...)
		s.ends[i] = uint32(len(s.arena))
		if want[p] {
			s.rows[p] = append(s.rows[p], int32(i))
		}
	}
	hold, err := views.hold(int64(cap(s.arena)) + int64(len(gids))*8 + int64(len(want))*24)
	if err != nil {
		release()
		return err
	}
	s.hold = hold
	refs := int32(0)
	for _, w := range want {
		if w {
			refs++
		}
	}
	s.refs.Store(refs)
	if refs == 0 {
		release()
		hold.release()
		return nil
	}
	for p, w := range want {
		if w {
			stores[p].(checkpoint.LiveSnapshotter).SetLiveSnapshot(&keyedView{s: s, part: p})
		}
	}
	return nil
}

// encode encodes every row's values (once, by the first view read).
func (s *keyedSnapshot) encode() {
	if err := s.val.encodeCols(s.vals); err != nil {
		s.err = err
		return
	}
	s.err = s.hold.add(s.val.enc.HeapBytes())
}

// keyedView is one partition's view of a keyedSnapshot.
type keyedView struct {
	s    *keyedSnapshot
	part int
	done atomic.Bool
}

// Entries implements checkpoint.LiveView. Views of several partitions
// may be read at once: after the shared encode, they only read.
func (v *keyedView) Entries(_ context.Context, emit func(key, value []byte) error) error {
	s := v.s
	s.once.Do(s.encode)
	if s.err != nil {
		return s.err
	}
	var vb [9]byte
	for _, i := range s.rows[v.part] {
		start := uint32(0)
		if i > 0 {
			start = s.ends[i-1]
		}
		if err := emit(s.arena[start:s.ends[i]], s.val.bytesAt(int(i), &vb)); err != nil {
			return err
		}
	}
	return nil
}

// EntryShape implements checkpoint.LiveShaper: Entries emits one entry
// per row of the partition (a group's key and value, well under a direct
// chunk's size), so that the encode's arena and the snapshot's body are
// allocated once at their size instead of doubling from empty in every
// snapshot (fresh pages each time: the windowed workload's background
// encode grew its arena's keys by appends). It encodes the values, as
// Entries would.
func (v *keyedView) EntryShape() (entries int, keyBytes, valueBytes int64) {
	s := v.s
	s.once.Do(s.encode)
	if s.err != nil {
		return 0, 0, 0
	}
	var vb [9]byte
	for _, i := range s.rows[v.part] {
		start := uint32(0)
		if i > 0 {
			start = s.ends[i-1]
		}
		keyBytes += int64(s.ends[i] - start)
		valueBytes += int64(len(s.val.bytesAt(int(i), &vb)))
	}
	return len(s.rows[v.part]), keyBytes, valueBytes
}

var _ checkpoint.LiveShaper = (*keyedView)(nil)

// Release implements checkpoint.LiveView.
func (v *keyedView) Release() {
	if !v.done.CompareAndSwap(false, true) {
		return
	}
	if v.s.refs.Add(-1) == 0 {
		for _, a := range v.s.vals {
			a.Release()
		}
		v.s.val.enc.Release()
		v.s.vals, v.s.arena, v.s.ends, v.s.rows = nil, nil, nil, nil
		v.s.hold.release()
	}
}
