package server

import (
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// A batch query's allocator borrows the records its table scans read
// (vector.RecordBorrower, see vector/borrow.go): a record whose buffers
// the query did not allocate (an in-memory table's, a sink snapshot's)
// is kept retained by the allocator until endQuery, and the operators get
// a view of it whose buffers are not reference counted. So an operator
// unwound by a limit panic while it holds a table's batch leaks only Go
// structures, and every operator is covered at once; what the query
// allocated itself is reclaimed by the registry (memlimit_registry.go).
//
// Only allocators whose query ends in endQuery borrow (borrows is set):
// the views are valid until then. A command's allocator (INSERT, CREATE
// TABLE AS: their rows may be stored in a table) and a streaming query's
// (it lives as long as the stream) do not.

var (
	_ vector.RecordBorrower = (*queryAllocator)(nil)
	_ vector.RecordBorrower = (*operatorAllocator)(nil)
)

// Borrow implements vector.RecordBorrower.
func (a *queryAllocator) Borrow(rec arrow.Record) arrow.Record {
	if !a.borrows || a.owns(rec) {
		return rec
	}
	view := vector.ViewRecord(rec)
	a.mu.Lock()
	a.borrowed = append(a.borrowed, rec)
	a.mu.Unlock()
	return view
}

func (o *operatorAllocator) Borrow(rec arrow.Record) arrow.Record { return o.a.Borrow(rec) }

// owns reports whether every buffer of rec with bytes is one the query
// allocated and still holds (its first byte is registered).
func (a *queryAllocator) owns(rec arrow.Record) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	all := true
	vector.RecordBuffers(rec, func(b *memory.Buffer) bool {
		bs := b.Bytes()
		if len(bs) == 0 {
			return true
		}
		if _, ok := a.live[unsafe.SliceData(bs)]; !ok {
			all = false
		}
		return all
	})
	return all
}

// releaseBorrowed releases the records the query borrowed; it returns how
// many. It must be called once the query's operators and result stream
// are closed (no view is read after).
func (a *queryAllocator) releaseBorrowed() int {
	a.mu.Lock()
	recs := a.borrowed
	a.borrowed = nil
	a.mu.Unlock()
	for _, r := range recs {
		r.Release()
	}
	return len(recs)
}
