package vector

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// ConcatRecords returns one record, owned by the caller, holding the rows
// of recs (borrowed; all of schema) in order. A single record is returned
// itself, retained, not copied; no records give an empty record; several
// are copied column by column into arrays allocated from mem. The error
// names the column that failed.
func ConcatRecords(mem memory.Allocator, schema *arrow.Schema, recs []arrow.Record) (arrow.Record, error) {
	if len(recs) == 1 {
		recs[0].Retain()
		return recs[0], nil
	}
	cols := make([]arrow.Array, schema.NumFields())
	parts := make([]arrow.Array, len(recs))
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	for c, f := range schema.Fields() {
		if len(recs) == 0 {
			cols[c] = array.MakeArrayOfNull(mem, f.Type, 0)
			continue
		}
		for i, r := range recs {
			parts[i] = r.Column(c)
		}
		col, err := array.Concatenate(parts, mem)
		if err != nil {
			releaseArrays(cols[:c])
			return nil, fmt.Errorf("vector: concatenate column %s of %d records: %w", f.Name, len(recs), err)
		}
		cols[c] = col
	}
	out := array.NewRecord(schema, cols, rows)
	releaseArrays(cols)
	return out, nil
}
