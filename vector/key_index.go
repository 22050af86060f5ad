package vector

import (
	"context"
	"fmt"

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
// Keys are never removed. A KeyIndex is not safe for concurrent use.
type KeyIndex struct {
	g     grouper
	ctxg  contextGrouper // g, when it grows interruptibly
	nkeys int
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
	x := &KeyIndex{g: g, nkeys: len(types)}
	x.ctxg, _ = g.(contextGrouper)
	return x, nil
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
