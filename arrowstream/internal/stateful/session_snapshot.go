package stateful

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// Snapshots of the decoded sessions (checkpoint.LiveSnapshotter): when a
// commit makes snapshots due, the epoch copies the sessions of the
// partitions that asked out of the decoded state (their keys and bounds,
// and their aggregate states as one Arrow record: one State of their
// groups), and the stores' background maintenance encodes them into the
// stores' values (joinSessions' framing) with a value codec of the
// snapshot's own. The decoded state itself is never shared with the
// maintenance: the next epochs change it in place.

// sessionSnapshot is the copy shared by the views of the partitions that
// asked; the last view released frees it.
type sessionSnapshot struct {
	keys  []string
	first []int32 // by key: its first session; key i's are first[i]:first[i+1]
	ends  []arrow.Timestamp
	// byPart: each partition's keys (indexes into keys).
	byPart [][]int32
	cols   []arrow.Array // the session, then the aggregate states; owned
	val    *rowCodec

	once sync.Once
	err  error
	refs atomic.Int32
	hold *viewHold
	// spare takes the buffers back when the last view is released.
	spare *sessionSnapSpare
}

// offerDecoded hands the partitions in want (wantsLive) a view of their
// decoded sessions as the epoch leaves them.
func (s *statefulSessionWindow) offerDecoded(want []bool) error {
	d := s.index.dec
	// The buffers of the last snapshot the maintenance released (its
	// keys, bounds, partition lists and value codec) are refilled: a
	// snapshot every few epochs otherwise faults in fresh pages for a
	// copy the size of the state each time.
	snap := s.snapSpare.take()
	// The copy is sized up front from the decoded state's counts (keys
	// spread evenly over the partitions, with an eighth to spare): grown
	// by appends it cost a tenth of q11's operator in reallocations.
	wanted := 0
	for _, w := range want {
		if w {
			wanted++
		}
	}
	keys := sizeShare(d.numKeys(), wanted, len(want))
	sessions := sizeShare(int(s.index.count), wanted, len(want))
	snap.keys = refill(snap.keys, keys)
	snap.first = refill(snap.first, keys+1)
	snap.ends = refill(snap.ends, sessions)
	d.saveGids = refill(d.saveGids, sessions)
	d.saveBounds = refill(d.saveBounds, sessions)
	gids, starts := d.saveGids, d.saveBounds
	if len(snap.byPart) != len(want) {
		snap.byPart = make([][]int32, len(want))
	}
	perPart := sizeShare(d.numKeys(), 1, len(want))
	for p, w := range want {
		snap.byPart[p] = snap.byPart[p][:0]
		if w {
			snap.byPart[p] = refill(snap.byPart[p], perPart)
		}
	}
	d.each(func(ks *keySessions) {
		if !want[ks.part] || len(ks.list) == 0 {
			return
		}
		snap.byPart[ks.part] = append(snap.byPart[ks.part], int32(len(snap.keys)))
		snap.keys = append(snap.keys, ks.key)
		snap.first = append(snap.first, int32(len(gids)))
		for _, ls := range ks.list {
			gids = append(gids, ls.gid)
			starts = append(starts, arrow.Timestamp(ls.start))
			snap.ends = append(snap.ends, arrow.Timestamp(ls.end))
		}
	})
	d.saveGids, d.saveBounds = gids[:0], starts[:0]
	snap.first = append(snap.first, int32(len(gids)))
	held := int64(cap(snap.keys))*int64(unsafe.Sizeof("")) + int64(cap(snap.first))*4 + int64(cap(snap.ends))*8
	for _, b := range snap.byPart {
		held += int64(cap(b)) * 4
	}
	hold, err := s.views.hold(held)
	if err != nil {
		s.snapSpare.put(snap)
		return fmt.Errorf("arrowstream: state of operator %d: live snapshot: %w", s.opID, err)
	}
	snap.hold = hold
	states, err := d.agg.Values(gids) // owned; no session id column
	if err != nil {
		s.snapSpare.put(snap)
		return fmt.Errorf("arrowstream: state of operator %d: live snapshot: %w", s.opID, err)
	}
	snap.cols = append(snap.cols[:0], windowArray(s.mem, starts, snap.ends))
	snap.cols = append(snap.cols, states...)
	if snap.val == nil {
		if snap.val, err = newValueCodec(s.mem, s.partialSchema, s.valCols); err != nil {
			releaseArrays(snap.cols)
			snap.cols = snap.cols[:0]
			s.snapSpare.put(snap)
			return fmt.Errorf("arrowstream: state of operator %d: live snapshot: %w", s.opID, err)
		}
	}
	n := int32(0)
	for _, w := range want {
		if w {
			n++
		}
	}
	snap.refs.Store(n)
	if n > 0 {
		s.snapSpare.out.Add(1)
	}
	for p, w := range want {
		if w {
			s.state.stores[p].(checkpoint.LiveSnapshotter).SetLiveSnapshot(&sessionSnapView{s: snap, part: p})
		}
	}
	return nil
}

// sessionSnapSpare keeps the buffers of the last live snapshot whose
// views were all released, for the operator's next snapshot. Views are
// released by the stores' maintenance goroutines while the epoch may be
// making the next snapshot, hence the lock. After the operator closes,
// released buffers are dropped.
type sessionSnapSpare struct {
	mu     sync.Mutex
	snap   *sessionSnapshot // nil: none kept
	closed bool
	// out counts the snapshots handed out whose views are not all
	// released: while any is, a key string it copied may be read.
	out atomic.Int32
}

// idle reports whether every snapshot handed out has been released, so
// that no key string of the decoded state is read by the maintenance.
func (sp *sessionSnapSpare) idle() bool { return sp.out.Load() == 0 }

// take returns a snapshot to fill: one with the kept buffers (its
// lengths to be reset by the caller, its reservation released), or a
// new one.
func (sp *sessionSnapSpare) take() *sessionSnapshot {
	sp.mu.Lock()
	old := sp.snap
	sp.snap = nil
	sp.mu.Unlock()
	snap := &sessionSnapshot{spare: sp}
	if old != nil {
		old.hold.release()
		snap.keys, snap.first, snap.ends, snap.byPart = old.keys, old.first, old.ends, old.byPart
		snap.cols, snap.val = old.cols[:0], old.val
	}
	return snap
}

// put keeps a released snapshot's buffers (their arrays already
// released), or drops them when some are kept already or the operator
// has closed. Its reservation stays held while they are kept.
func (sp *sessionSnapSpare) put(snap *sessionSnapshot) {
	clear(snap.keys) // no key string keeps its entry alive
	snap.keys = snap.keys[:0]
	clear(snap.cols)
	if snap.val != nil {
		snap.val.encodeCols(nil) // the codec keeps no released column
	}
	sp.mu.Lock()
	keep := sp.snap == nil && !sp.closed
	if keep {
		sp.snap = snap
	}
	sp.mu.Unlock()
	if !keep {
		snap.drop()
	}
}

// close drops the kept buffers; those released later are dropped too.
func (sp *sessionSnapSpare) close() {
	sp.mu.Lock()
	old := sp.snap
	sp.snap, sp.closed = nil, true
	sp.mu.Unlock()
	if old != nil {
		old.drop()
	}
}

// drop frees a snapshot's codec and reservation (its arrays are
// released already).
func (s *sessionSnapshot) drop() {
	if s.val != nil {
		s.val.enc.Release()
	}
	s.hold.release()
	s.keys, s.first, s.ends, s.byPart, s.cols, s.val = nil, nil, nil, nil, nil, nil
}

// refill returns s emptied when it holds n, else a new slice: of
// exactly n for a first snapshot (its copy is sized, not grown by
// appends; sizeShare), of n and a quarter more to replace a kept buffer
// too small, so that a state growing between snapshots (q11's grows
// through the run) does not outgrow its buffers at every snapshot.
func refill[T any](s []T, n int) []T {
	switch {
	case cap(s) >= n:
		return s[:0]
	case cap(s) == 0:
		return make([]T, 0, n)
	}
	return make([]T, 0, n+n/4)
}

// sizeShare is the capacity for the share of n that of parts of all
// partitions hold: all of n when they are all, else their even share
// and an eighth more.
func sizeShare(n, of, all int) int {
	if of >= all || all <= 0 {
		return n
	}
	share := n * of / all
	return share + share/8 + 1
}

// encode encodes every session's row (once, by the first view read).
func (s *sessionSnapshot) encode() {
	if s.err = s.val.encodeCols(s.cols); s.err != nil {
		return
	}
	s.err = s.hold.add(s.val.enc.HeapBytes())
}

// sessionSnapView is one partition's view of a sessionSnapshot.
type sessionSnapView struct {
	s    *sessionSnapshot
	part int
	done atomic.Bool
}

// Entries implements checkpoint.LiveView. Views of several partitions
// may be read at once: after the shared encode they only read the codec
// (bytesAt), each framing its values in its own buffer.
func (v *sessionSnapView) Entries(_ context.Context, emit func(key, value []byte) error) error {
	s := v.s
	s.once.Do(s.encode)
	if s.err != nil {
		return s.err
	}
	var buf []byte
	var vb [9]byte
	for _, k := range s.byPart[v.part] {
		buf = buf[:0]
		for r := s.first[k]; r < s.first[k+1]; r++ {
			val := s.val.bytesAt(int(r), &vb)
			buf = appendSession(buf, int64(s.ends[r]), val)
		}
		if err := emit(stringBytes(s.keys[k]), buf); err != nil {
			return err
		}
	}
	return nil
}

// EntryBytes implements checkpoint.LiveSizer: the bytes of the entries
// Entries emits (the keys, and each session's framing and encoded row),
// so that the snapshot's body is allocated once at its size instead of
// doubling while it is written. It encodes the rows, as Entries would.
func (v *sessionSnapView) EntryBytes() int64 {
	_, kb, vb := v.EntryShape()
	return kb + vb
}

// EntryShape implements checkpoint.LiveShaper: Entries emits one entry
// per key of the partition (each well under a direct chunk's size), and
// their key and value bytes, so that the encode's arena is allocated once
// too. It encodes the rows, as Entries would.
func (v *sessionSnapView) EntryShape() (entries int, keyBytes, valueBytes int64) {
	s := v.s
	s.once.Do(s.encode)
	if s.err != nil {
		return 0, 0, 0
	}
	var vb [9]byte
	for _, k := range s.byPart[v.part] {
		keyBytes += int64(len(s.keys[k]))
		for r := s.first[k]; r < s.first[k+1]; r++ {
			l := len(s.val.bytesAt(int(r), &vb))
			valueBytes += int64(uvarintLen(uint64(l)) + 8 + l)
		}
	}
	return len(s.byPart[v.part]), keyBytes, valueBytes
}

// uvarintLen is the length of x as binary.AppendUvarint writes it.
func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// Release implements checkpoint.LiveView.
func (v *sessionSnapView) Release() {
	if !v.done.CompareAndSwap(false, true) {
		return
	}
	if v.s.refs.Add(-1) == 0 {
		releaseArrays(v.s.cols)
		v.s.spare.put(v.s)
		v.s.spare.out.Add(-1)
	}
}
