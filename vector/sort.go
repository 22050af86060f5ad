package vector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// NullOrder places nulls in a sort.
type NullOrder int8

const (
	// NullsDefault is Spark's default: nulls first in ascending order, last
	// in descending order. It is the zero value.
	NullsDefault NullOrder = iota
	// NullsFirst puts nulls before every value (NULLS FIRST).
	NullsFirst
	// NullsLast puts nulls after every value (NULLS LAST).
	NullsLast
)

// SortKey is one ORDER BY term. The zero value of Descending and Nulls is
// Spark's default, ASC NULLS FIRST; Descending alone gives DESC NULLS LAST.
type SortKey struct {
	Expr       Expr
	Descending bool
	Nulls      NullOrder
}

// Asc is the key e ASC (NULLS FIRST).
func Asc(e Expr) SortKey { return SortKey{Expr: e} }

// Desc is the key e DESC (NULLS LAST).
func Desc(e Expr) SortKey { return SortKey{Expr: e, Descending: true} }

// NullsFirst reports whether nulls sort before values under this key.
func (k SortKey) NullsFirst() bool {
	switch k.Nulls {
	case NullsFirst:
		return true
	case NullsLast:
		return false
	}
	return !k.Descending
}

// String renders the key as in SQL, with its resolved null order.
func (k SortKey) String() string {
	dir, nulls := "ASC", "NULLS LAST"
	if k.Descending {
		dir = "DESC"
	}
	if k.NullsFirst() {
		nulls = "NULLS FIRST"
	}
	return fmt.Sprintf("%s %s %s", k.Expr, dir, nulls)
}

// Sort orders all rows of its input by a list of keys (SQL's ORDER BY). It
// is a blocking operator: the first Next reads the whole input. Sorting is
// stable, so rows with equal keys keep their input order. Floating-point
// keys order as Spark's: NaN above every number, -0.0 equal to 0.0. The
// output comes in records of at most 64K rows.
//
// The rows are sorted as a permutation of row indices. A first key of a
// fixed-width type is mapped to order-preserving 64-bit integers and radix
// sorted; a first string key is sorted on 8-byte prefixes; further keys and
// other types use typed comparators chosen when the Sort is built.
type Sort struct {
	mem   memory.Allocator
	input Operator
	keys  []SortKey
	evs   []Evaluator
	kinds []sortKind
	limit int64 // rows to keep (top-N), or -1 for all

	buf     []arrow.Record // input read so far (top-N compacts it)
	bufRows int64
	sorted  bool         // the input has been read and sorted
	data    arrow.Record // the whole input, once read
	perm    []int32      // its rows in output order
	pos     int          // next position in perm

	err    error
	closed bool
	heap   heapAccount // the permutation and the sort's scratch
	big    bigMem      // the permutation when large (bigAlloc)
}

// NewSort returns a Sort of input by keys (at least one). Keys must be of
// a boolean, numeric, string, binary, date or timestamp type; dictionary
// strings are decoded. On success the Sort owns input.
func NewSort(mem memory.Allocator, input Operator, keys []SortKey) (*Sort, error) {
	return newSort(mem, input, keys, -1)
}

// NewTopN returns the first n rows of input in the order of keys, as a
// Sort followed by a Limit would, without holding more than about
// max(2n, 64K) rows plus one input batch: whenever that many are buffered it
// sorts them and keeps the first n. On success it owns input.
func NewTopN(mem memory.Allocator, input Operator, keys []SortKey, n int64) (*Sort, error) {
	if n < 0 {
		return nil, fmt.Errorf("vector: top-N limit must not be negative, got %d", n)
	}
	return newSort(mem, input, keys, n)
}

func newSort(mem memory.Allocator, input Operator, keys []SortKey, limit int64) (*Sort, error) {
	if len(keys) == 0 {
		return nil, errors.New("vector: sort needs at least one key")
	}
	in := input.Schema()
	s := &Sort{mem: mem, input: input, keys: append([]SortKey(nil), keys...), limit: limit,
		evs: make([]Evaluator, len(keys)), kinds: make([]sortKind, len(keys)), heap: newHeapAccount(mem, "sort"), big: newBigMem(mem)}
	for i, k := range keys {
		if k.Expr == nil {
			return nil, fmt.Errorf("vector: sort key %d is nil", i)
		}
		ev, err := k.Expr.Bind(in, mem)
		if err != nil {
			return nil, err
		}
		ev = Plain(ev, mem)
		kind, err := sortKeyKind(ev.DataType())
		if err != nil {
			return nil, newBindError(k.Expr, in, err)
		}
		s.evs[i], s.kinds[i] = ev, kind
	}
	return s, nil
}

// Schema implements Operator; it is the input's schema.
func (s *Sort) Schema() *arrow.Schema { return s.input.Schema() }

// Next implements Operator.
func (s *Sort) Next(ctx context.Context) (arrow.Record, error) {
	if s.err != nil {
		return nil, s.err
	}
	if !s.sorted {
		s.sorted = true
		if err := s.materialize(ctx); err != nil {
			s.err = err
			return nil, err
		}
	}
	if s.pos >= len(s.perm) {
		s.release()
		s.err = io.EOF
		return nil, io.EOF
	}
	end := min(s.pos+outputBatchRows, len(s.perm))
	out, err := gatherRows(s.mem, s.data, s.perm[s.pos:end])
	if err != nil {
		s.err = err
		return nil, err
	}
	s.pos = end
	if s.pos == len(s.perm) {
		s.release() // the last record no longer needs the input
	}
	return out, nil
}

// materialize reads the whole input and sorts it; it leaves s.data nil and
// s.perm empty when there is nothing to output.
func (s *Sort) materialize(ctx context.Context) error {
	if s.limit == 0 {
		return nil
	}
	for {
		rec, err := s.input.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if rec.NumRows() == 0 {
			// Empty batches may lack buffers, which concatenation rejects.
			rec.Release()
			continue
		}
		s.buf = append(s.buf, rec)
		s.bufRows += rec.NumRows()
		if s.limit > 0 && s.bufRows >= s.limit+max(s.limit, outputBatchRows) {
			if err := s.compact(ctx); err != nil {
				return err
			}
		}
	}
	if len(s.buf) == 0 {
		return nil
	}
	data, err := s.concat(ctx)
	if err != nil {
		return err
	}
	perm, err := s.sortRecord(ctx, data)
	if err != nil {
		data.Release()
		return err
	}
	if s.limit >= 0 && int64(len(perm)) > s.limit {
		perm = perm[:s.limit]
	}
	s.data, s.perm = data, perm
	return s.heap.set(sliceBytes(perm))
}

// compact replaces the buffered records by their first s.limit rows in
// order. Those rows precede every later input row, so stability holds.
func (s *Sort) compact(ctx context.Context) error {
	data, err := s.concat(ctx)
	if err != nil {
		return err
	}
	defer data.Release()
	perm, err := s.sortRecord(ctx, data)
	if err != nil {
		return err
	}
	top, err := gatherRows(s.mem, data, perm[:min(int64(len(perm)), s.limit)])
	bigFree(&s.big, perm)
	if err != nil {
		return err
	}
	if err := s.heap.set(0); err != nil { // the permutation is dropped
		return err
	}
	s.buf, s.bufRows = append(s.buf, top), top.NumRows()
	return nil
}

// concat turns the buffered records into one record (owned by the
// caller) and empties the buffer.
func (s *Sort) concat(ctx context.Context) (arrow.Record, error) {
	recs := s.buf
	s.buf, s.bufRows = nil, 0
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	out, err := ConcatRecordsContext(ctx, s.mem, s.input.Schema(), recs)
	if err != nil {
		return nil, fmt.Errorf("vector: sort: %w", err)
	}
	return out, nil
}

// sortRecord returns the rows of rec in key order.
func (s *Sort) sortRecord(ctx context.Context, rec arrow.Record) ([]int32, error) {
	n := int(rec.NumRows())
	// The permutation, the valid/null split and the radix sort's two
	// (key, row) arrays: reserved before they are made; after the sort
	// only the permutation stays (see materialize).
	if err := s.heap.set(int64(n) * (4 + 4 + 2*int64(unsafe.Sizeof(keyRow{})))); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The (key, row) pairs and other scratch of the sort: mapped when
	// large and faulted in with context checks (bigAlloc), as is the
	// permutation (s.big, kept until the output is done).
	scratch := bigMem{cache: s.big.cache}
	defer scratch.release()
	arrs, err := evalAll(ctx, s.evs, rec)
	if err != nil {
		return nil, err
	}
	defer releaseArrays(arrs)
	for i, a := range arrs {
		if a.Len() != n {
			return nil, fmt.Errorf("vector: sort key %s returned %d values for %d rows", s.keys[i].Expr, a.Len(), n)
		}
	}
	cmps := make([]rowCmp, len(arrs))
	for i, a := range arrs {
		cmps[i] = newRowCmp(a, s.keys[i].Descending, s.keys[i].NullsFirst())
	}
	first, k0 := arrs[0], s.keys[0]
	switch s.kinds[0] {
	case sortFixed, sortBytes:
		valid, nulls, err := splitNulls(ctx, &s.big, first)
		if err != nil {
			return nil, err
		}
		rest := cmps[1:]
		if s.kinds[0] == sortFixed {
			sorted, err := sortFixedKeys(ctx, &scratch, first, valid, k0.Descending)
			if err != nil {
				return nil, err
			}
			if len(rest) > 0 {
				if err := sortRunsByCmp(ctx, &scratch, sorted, valid, rest); err != nil {
					return nil, err
				}
			}
		} else if err := sortBytesKeys(ctx, &scratch, first, valid, k0.Descending, rest); err != nil {
			return nil, err
		}
		if len(rest) > 0 {
			if err := sortByCmp(ctx, &scratch, nulls, rest); err != nil {
				return nil, err
			}
		}
		// Each has room for all rows: the append stays in its buffer.
		var perm []int32
		if k0.NullsFirst() {
			perm = append(nulls, valid...)
			bigFree(&s.big, valid)
		} else {
			perm = append(valid, nulls...)
			bigFree(&s.big, nulls)
		}
		return perm, nil
	default:
		perm, err := bigAlloc[int32](ctx, &s.big, n)
		if err != nil {
			return nil, err
		}
		for i := range perm {
			perm[i] = int32(i)
		}
		if err := sortByCmp(ctx, &scratch, perm, cmps); err != nil {
			return nil, err
		}
		return perm, nil
	}
}

// splitNulls returns the valid rows and the null rows of arr, each in
// input order, in buffers from m (bigAlloc). Both have capacity for all
// rows so either can take the other's rows appended.
func splitNulls(ctx context.Context, m *bigMem, arr arrow.Array) (valid, nulls []int32, err error) {
	n := arr.Len()
	if valid, err = bigAlloc[int32](ctx, m, n+selSlack); err != nil {
		return nil, nil, err
	}
	if nulls, err = bigAlloc[int32](ctx, m, n); err != nil {
		return nil, nil, err
	}
	nulls = nulls[:0]
	if arr.NullN() == 0 {
		valid = valid[:n]
		for i := range valid {
			valid[i] = int32(i)
		}
		return valid, nulls, nil
	}
	valid = selectValid(valid[:0], arr)
	j := 0
	for i := 0; i < n; i++ {
		if j < len(valid) && valid[j] == int32(i) {
			j++
			continue
		}
		nulls = append(nulls, int32(i))
	}
	return valid, nulls, nil
}

func (s *Sort) release() {
	if s.data != nil {
		s.data.Release()
		s.data = nil
	}
	for _, r := range s.buf {
		r.Release()
	}
	s.buf, s.perm = nil, nil
	s.big.release()
	s.heap.release()
}

// Close implements Operator; it releases what the Sort holds and closes the
// input.
func (s *Sort) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if s.err == nil {
		s.err = errOpClosed
	}
	s.release()
	return s.input.Close()
}
