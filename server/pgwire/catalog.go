package pgwire

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// firstUserOID is where user relations' OIDs start, as in PostgreSQL.
const firstUserOID = 16384

// emptyResult is a result without rows (a query over a catalog relation
// that has none, which the planner could not take).
func emptyResult() *localResult {
	schema := arrow.NewSchema([]arrow.Field{{Name: "?column?", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	return &localResult{rows: b.NewRecord()}
}
