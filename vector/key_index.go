package vector

import (
	"context"
	"fmt"
	"math/bits"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// KeyIndex numbers the distinct keys of a stream of key columns: the first
// key seen is 0, the next new one 1, and so on; equal keys (nulls equal)
// get the same number every time. It is the hash aggregation's grouping
// (the same typed tables: one fixed-width column, up to three fixed-width
// leaves as word tuples, anything else as normalized key bytes) offered to
// callers outside the package that keep their own per-key data in a slice
// indexed by the number — a materialized view's index of live rows, for
// instance — so that a batch of keys is hashed and probed column-wise, with
// no per-row interface call or allocation.
//
// Keys are never removed one by one; Reset forgets them all. A KeyIndex
// is not safe for concurrent use.
type KeyIndex struct {
	g     grouper
	ctxg  contextGrouper // g, when it grows interruptibly
	nkeys int
	mem   memory.Allocator
	types []arrow.DataType
}

// NewKeyIndex returns an index for keys of the given column types. It
// fails when there are no key columns or a type cannot be a key.
func NewKeyIndex(mem memory.Allocator, types []arrow.DataType) (*KeyIndex, error) {
	if len(types) == 0 {
		return nil, fmt.Errorf("vector: key index without key columns: %w", ErrType)
	}
	g, err := newGrouper(mem, types)
	if err != nil {
		return nil, err
	}
	x := &KeyIndex{g: g, nkeys: len(types), mem: mem, types: types}
	x.use(g)
	return x, nil
}

// use makes g the index's grouper. A words grouper counts no rows: an
// index reads only the keys' numbers, and the count (8 bytes a key and a
// write a row, into memory grown with the keys: 20 KB of q17's 650 KB an
// epoch, in its memory sink's view) would go unread.
func (x *KeyIndex) use(g grouper) {
	if wg, ok := g.(*wordsGrouper); ok {
		wg.noRows = true
	}
	x.g = g
	x.ctxg, _ = g.(contextGrouper)
}

// Index writes the number of every row's key (the key columns are borrowed
// and must have len(ids) rows) to ids, numbering new keys in order of first
// appearance. A key is new when its number is at least the Len before the
// call. When ctx is cancelled while the table grows, Index returns the
// context's error and the index must not be used again.
func (x *KeyIndex) Index(ctx context.Context, keys []arrow.Array, ids []int32) error {
	if len(keys) != x.nkeys {
		return fmt.Errorf("vector: key index of %d key columns given %d: %w", x.nkeys, len(keys), ErrType)
	}
	for i, k := range keys {
		if k.Len() != len(ids) {
			return fmt.Errorf("vector: key index: key column %d has %d rows, want %d: %w", i, k.Len(), len(ids), ErrType)
		}
	}
	if x.ctxg != nil {
		return x.ctxg.groupContext(ctx, keys, ids)
	}
	return x.g.group(keys, ids)
}

// Len is the number of distinct keys so far.
func (x *KeyIndex) Len() int { return x.g.numGroups() }

// HeapBytes is the Go-heap memory the index holds.
func (x *KeyIndex) HeapBytes() int64 { return x.g.heapBytes() }

// Release returns the Arrow and mapped memory the index holds; the index
// must not be used afterwards. It is idempotent.
func (x *KeyIndex) Release() { x.g.release() }

// Reset forgets every key: the next key indexed is 0 again. The table
// keeps its room when its grouper can be emptied in place (so that a
// caller numbering each batch's keys afresh, as a merge numbers an
// epoch's keys, does not grow a table from empty every time), unless it
// is more than four times what the keys just forgotten needed (one large
// batch does not leave every later one a large table to clear); other
// groupers are replaced by a fresh one. After an error (a fresh grouper
// that cannot be made) the index must not be used again.
func (x *KeyIndex) Reset() error {
	switch r := x.g.(type) {
	case *fixedGrouper:
		r.forgetKeys()
		return nil
	case groupResetter:
		r.resetGroups()
		return nil
	}
	x.g.release()
	g, err := newGrouper(x.mem, x.types)
	if err != nil {
		return err
	}
	x.use(g)
	return nil
}

// forgetKeys drops every group of a single fixed-width key (KeyIndex's
// Reset; LiveAggregate.Reset binds a fresh grouper for these): the slots
// are emptied in place, or, when the table is more than four times what
// the groups just dropped needed, replaced by one of that size (its
// large-buffer memory returned).
func (g *fixedGrouper) forgetKeys() {
	t := g.t
	size := minTableSlots
	for 2*(t.n+1) > size {
		size *= 2
	}
	if len(t.slots) > 4*size {
		t.release()
		t.slots = make([]groupSlot, size)
		t.shift = uint(64 - bits.TrailingZeros(uint(size)))
		t.mask = uint64(size - 1)
	} else {
		clear(t.slots)
	}
	t.n, t.nullGid, t.nullRows = 0, -1, 0
	t.sinceFlush, t.carry = 0, nil
	g.words, g.nulls = nil, nil
}
