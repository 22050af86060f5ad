package vector

import (
	"bytes"
	"context"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
)

// winBounds are the partition and peer-group boundaries of sorted rows.
type winBounds struct {
	n int
	// parts holds the first row of each partition, then n.
	parts []int32
	// peerLo and peerHi are each row's peer group [lo, hi): the rows with
	// equal order keys in its partition (the whole partition without ORDER
	// BY).
	peerLo, peerHi []int32
	// orderKey is the single order key (for RANGE frames with offsets), or
	// nil.
	orderKey arrow.Array
	desc     bool
}

// boundaries evaluates the partition and order keys over the sorted data
// and finds where partitions and peer groups change.
func (w *WindowOp) boundaries(ctx context.Context, data arrow.Record) (_ *winBounds, err error) {
	n := int(data.NumRows())
	if err := w.heap.set(int64(n) * 10); err != nil {
		return nil, err
	}
	// Peer groups cost two comparisons' worth of passes and 8 bytes a row;
	// row_number, ROWS frames and lag/lead do not read them.
	peers := w.needPeers()
	b := &winBounds{n: n}
	// A cancel after the order key is retained below must not leak it
	// (with one partition it is the whole sorted key column).
	defer func() {
		if err != nil {
			b.release()
		}
	}()
	if peers {
		if b.peerLo, err = zeroedContext[int32](ctx, n); err != nil {
			return nil, err
		}
		if b.peerHi, err = zeroedContext[int32](ctx, n); err != nil {
			return nil, err
		}
	}
	partDiff, err := zeroedContext[bool](ctx, n)
	if err != nil {
		return nil, err
	}
	var peerDiff []bool
	if peers {
		if peerDiff, err = zeroedContext[bool](ctx, n); err != nil {
			return nil, err
		}
	}
	if w.sort != nil {
		keys, err := evalAllContext(ctx, w.mem, w.sort.evs, data)
		if err != nil {
			return nil, err
		}
		defer releaseArrays(keys)
		for i, k := range keys {
			var diff []bool
			if i < w.nPart {
				diff = partDiff
			} else if peers {
				diff = peerDiff
			} else {
				continue
			}
			if err := markChangesContext(ctx, k, diff); err != nil {
				return nil, err
			}
		}
		if len(keys)-w.nPart == 1 {
			b.orderKey = keys[w.nPart]
			b.orderKey.Retain()
			b.desc = w.spec.OrderBy[0].Descending
		}
	}
	b.parts = append(b.parts, 0)
	err = eachRange(ctx, n, func(lo, hi int) {
		for i := max(lo, 1); i < hi; i++ {
			if partDiff[i] {
				b.parts = append(b.parts, int32(i))
				if peers {
					peerDiff[i] = true
				}
			}
		}
	})
	if err != nil {
		return nil, err
	}
	b.parts = append(b.parts, int32(n))
	if !peers {
		return b, nil
	}
	// A peer group starts at a change and ends before the next: peerLo
	// runs forwards and peerHi backwards, each chunk carrying the last
	// value of the one before.
	err = eachRange(ctx, n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if i == 0 || peerDiff[i] {
				b.peerLo[i] = int32(i)
			} else {
				b.peerLo[i] = b.peerLo[i-1]
			}
		}
	})
	if err != nil {
		return nil, err
	}
	err = eachRange(ctx, n, func(lo, hi int) {
		// Chunks from the end: [n-hi, n-lo).
		for i := n - 1 - lo; i >= n-hi; i-- {
			if i == n-1 || peerDiff[i+1] {
				b.peerHi[i] = int32(i + 1)
			} else {
				b.peerHi[i] = b.peerHi[i+1]
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// needPeers reports whether a call reads the peer groups: the ranks but
// row_number, and RANGE frames (CURRENT ROW there is the peer group).
func (w *WindowOp) needPeers() bool {
	for _, c := range w.calls {
		switch c.call.Func {
		case WinRank, WinDenseRank, WinPercentRank, WinCumeDist:
			return true
		}
		if c.call.Frame.Range {
			return true
		}
	}
	return false
}

func (b *winBounds) release() {
	if b.orderKey != nil {
		b.orderKey.Release()
		b.orderKey = nil
	}
}

// markChangesContext is markChanges over chunks of cancelCheckRows rows,
// checking ctx between them: each chunk is a slice starting one row early,
// so that its first row compares with the row before.
func markChangesContext(ctx context.Context, arr arrow.Array, diff []bool) error {
	n := arr.Len()
	if n <= cancelCheckRows {
		markChanges(arr, diff)
		return nil
	}
	return eachRange(ctx, n, func(lo, hi int) {
		lo = max(lo, 1) - 1
		part := array.NewSlice(arr, int64(lo), int64(hi))
		markChanges(part, diff[lo:hi])
		part.Release()
	})
}

// markChanges sets diff[i] where row i of arr differs from row i-1 (nulls
// equal each other; NaN equals NaN and -0.0 equals 0.0, as Spark's
// grouping does).
func markChanges(arr arrow.Array, diff []bool) {
	n := arr.Len()
	var bm []byte
	off := arr.Data().Offset()
	if arr.NullN() > 0 {
		bm = arr.NullBitmapBytes()
	}
	switch a := arr.(type) {
	case *array.Int8:
		markFixed(a.Int8Values(), bm, off, diff)
	case *array.Int16:
		markFixed(a.Int16Values(), bm, off, diff)
	case *array.Int32:
		markFixed(a.Int32Values(), bm, off, diff)
	case *array.Int64:
		markFixed(a.Int64Values(), bm, off, diff)
	case *array.Date32:
		markFixed(a.Date32Values(), bm, off, diff)
	case *array.Timestamp:
		markFixed(a.TimestampValues(), bm, off, diff)
	case *array.Decimal128:
		markFixed[decimal128.Num](a.Values(), bm, off, diff)
	case *array.Float32:
		markFloat(a.Float32Values(), bm, off, diff)
	case *array.Float64:
		markFloat(a.Float64Values(), bm, off, diff)
	case *array.String, *array.Binary:
		offs, data := binaryParts(a)
		for i := 1; i < n; i++ {
			if diff[i] {
				continue
			}
			pv, cv := bm == nil || bitSet(bm, off+i-1), bm == nil || bitSet(bm, off+i)
			if pv != cv {
				diff[i] = true
			} else if cv && !bytes.Equal(data[offs[i-1]:offs[i]], data[offs[i]:offs[i+1]]) {
				diff[i] = true
			}
		}
	default:
		c := newRowCmp(arr, false, true)
		for i := 1; i < n; i++ {
			if !diff[i] && c.cmp(int32(i-1), int32(i)) != 0 {
				diff[i] = true
			}
		}
	}
}

func markFixed[T comparable](v []T, bm []byte, off int, diff []bool) {
	if bm == nil {
		for i := 1; i < len(v); i++ {
			diff[i] = diff[i] || v[i] != v[i-1]
		}
		return
	}
	for i := 1; i < len(v); i++ {
		pv, cv := bitSet(bm, off+i-1), bitSet(bm, off+i)
		diff[i] = diff[i] || pv != cv || cv && v[i] != v[i-1]
	}
}

func markFloat[T float32 | float64](v []T, bm []byte, off int, diff []bool) {
	for i := 1; i < len(v); i++ {
		pv, cv := bm == nil || bitSet(bm, off+i-1), bm == nil || bitSet(bm, off+i)
		a, b := v[i-1], v[i]
		same := a == b || a != a && b != b
		diff[i] = diff[i] || pv != cv || cv && !same
	}
}
