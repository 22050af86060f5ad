package stateful

import (
	"sync"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// emptyRecords hands out one retained empty record per schema: a join
// partition with no new rows on a side needs an empty record of the
// side's codec schema every epoch, and building its columns (one
// MakeArrayOfNull per field) was a fixed cost of every partition of every
// epoch. The records are immutable, so every partition shares one; they
// are released with the join (Close). Safe for the partitions' goroutines.
type emptyRecords struct {
	mu   sync.Mutex
	recs []arrow.Record // at most one per codec schema (a handful)
}

// get returns an empty record of schema, retained for the caller.
func (e *emptyRecords) get(mem memory.Allocator, schema *arrow.Schema) arrow.Record {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range e.recs {
		if r.Schema() == schema {
			r.Retain()
			return r
		}
	}
	cols := make([]arrow.Array, schema.NumFields())
	for c, f := range schema.Fields() {
		cols[c] = array.MakeArrayOfNull(mem, f.Type, 0)
	}
	r := assemble(schema, nil, cols, 0)
	e.recs = append(e.recs, r)
	r.Retain()
	return r
}

// release releases every cached record.
func (e *emptyRecords) release() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range e.recs {
		r.Release()
	}
	e.recs = nil
}
