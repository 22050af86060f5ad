package vector

import (
	"context"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Borrowing a table's batches for the length of a query.
//
// A batch query reads an in-memory table by retaining the table's own
// records and handing them up the operator tree. If an operator is
// unwound by a panic (the server's query allocator panics on an
// allocation past twice the query's limit) while it holds such a record,
// no one releases it: the table's buffers stay retained after the table
// is dropped, and their allocator never gets them back. Releasing by
// defer in every operator would need every operator (and each new one)
// to get it right; instead the query itself holds the table's records:
//
//   - a RecordBorrower (the server's per-query allocator) takes each
//     record a table scan returns, keeps it retained until the query has
//     ended and hands the operators a view of it: a record over the same
//     bytes whose buffers are not reference counted (no allocator);
//   - an operator that leaks a view leaks only its Go structures, which
//     the collector takes; the table's record is released once, by the
//     query, when its operators and result stream are closed.
//
// The view's bytes are valid while the borrowed record is, which is the
// whole query: nothing of a batch query outlives it (its results are
// copied into their messages before they are sent).

// RecordBorrower is implemented by an allocator of a batch query that
// keeps the records its scans read from tables retained until the query
// ends.
type RecordBorrower interface {
	// Borrow takes rec (the caller's reference) and returns a record the
	// caller owns in its place: rec itself when the query owns all of
	// its buffers (they are freed with the query anyway), else a view of
	// rec (ViewRecord) while rec is kept until the query ends.
	Borrow(rec arrow.Record) arrow.Record
}

// BorrowScan returns op with every record it returns passed through
// mem's Borrow when mem is a RecordBorrower, else op itself. It takes
// ownership of op.
func BorrowScan(mem memory.Allocator, op Operator) Operator {
	b, ok := mem.(RecordBorrower)
	if !ok {
		return op
	}
	return &borrowScan{Operator: op, b: b}
}

// borrowScan is an operator whose records are borrowed by the query.
type borrowScan struct {
	Operator
	b RecordBorrower
}

// Next implements Operator.
func (s *borrowScan) Next(ctx context.Context) (arrow.Record, error) {
	rec, err := s.Operator.Next(ctx)
	if err != nil {
		return nil, err
	}
	return s.b.Borrow(rec), nil
}

// ViewRecord returns a new record over rec's bytes whose buffers have no
// allocator and no reference count: releasing it (or never releasing it)
// does nothing to rec's buffers. The view is valid only while rec is
// retained by someone; the caller keeps rec and owns the view.
func ViewRecord(rec arrow.Record) arrow.Record {
	cols := make([]arrow.Array, rec.NumCols())
	for i, c := range rec.Columns() {
		d := viewData(c.Data())
		cols[i] = array.MakeFromData(d)
		d.Release()
	}
	out := array.NewRecord(rec.Schema(), cols, rec.NumRows())
	for _, c := range cols {
		c.Release()
	}
	return out
}

// viewData is d over unowned buffers (children and dictionary too).
func viewData(d arrow.ArrayData) arrow.ArrayData {
	bufs := make([]*memory.Buffer, len(d.Buffers()))
	for i, b := range d.Buffers() {
		if b != nil {
			bufs[i] = memory.NewBufferBytes(b.Bytes())
		}
	}
	children := make([]arrow.ArrayData, len(d.Children()))
	for i, c := range d.Children() {
		children[i] = viewData(c)
	}
	var out *array.Data
	if dict := dictionaryOf(d); dict != nil {
		vd := viewData(dict)
		out = array.NewDataWithDictionary(d.DataType(), d.Len(), bufs, d.NullN(), d.Offset(), vd.(*array.Data))
		vd.Release()
	} else {
		out = array.NewData(d.DataType(), d.Len(), bufs, children, d.NullN(), d.Offset())
	}
	for _, c := range children {
		c.Release()
	}
	return out
}

// RecordBuffers calls f with every buffer of rec's columns (children and
// dictionaries too) until f returns false.
func RecordBuffers(rec arrow.Record, f func(*memory.Buffer) bool) {
	for _, c := range rec.Columns() {
		if !dataBuffers(c.Data(), f) {
			return
		}
	}
}

func dataBuffers(d arrow.ArrayData, f func(*memory.Buffer) bool) bool {
	for _, b := range d.Buffers() {
		if b != nil && !f(b) {
			return false
		}
	}
	for _, c := range d.Children() {
		if !dataBuffers(c, f) {
			return false
		}
	}
	if dict := dictionaryOf(d); dict != nil {
		return dataBuffers(dict, f)
	}
	return true
}

// dictionaryOf is d's dictionary, or nil (Data.Dictionary returns a
// typed nil when there is none).
func dictionaryOf(d arrow.ArrayData) arrow.ArrayData {
	if dd, ok := d.Dictionary().(*array.Data); ok && dd != nil {
		return dd
	}
	return nil
}
