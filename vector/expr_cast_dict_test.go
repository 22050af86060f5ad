package vector_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// dictStrings builds a dictionary<int16, string> record of column k over
// entries, with row i referring to entry idx[i] (-1: null).
func dictStrings(mem memory.Allocator, entries []string, idx []int16) arrow.Record {
	sb := array.NewStringBuilder(mem)
	defer sb.Release()
	sb.AppendValues(entries, nil)
	dict := sb.NewArray()
	defer dict.Release()
	k := dictColumn(mem, dict, idx)
	defer k.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: dictType, Nullable: true}}, nil)
	return array.NewRecord(schema, []arrow.Array{k}, int64(len(idx)))
}

// TestCastDictionaryEntriesNoRowNeeds: an ANSI cast of a dictionary
// column casts each entry once, but an entry that does not cast fails the
// query only when a valid row refers to it, and the error names that row.
// An entry under a null index or an unreferenced one is no error (the
// fuzzer found coalesce(i, CAST(d16 AS TINYINT), ...) failing or not by
// batch layout: the rows coalesce does not need were taken away, the
// dictionary kept; its seed is in testdata/fuzz/FuzzExprEvalWide).
func TestCastDictionaryEntriesNoRowNeeds(t *testing.T) {
	mem := vt.NewAllocator(t)
	ctx := context.Background()
	entries := []string{"7", "2026-01-01", "300", "-1"}
	run := func(e vector.Expr, rec arrow.Record) (arrow.Array, error) {
		t.Helper()
		ev, err := e.Bind(rec.Schema(), mem)
		if err != nil {
			t.Fatal(err)
		}
		return ev.Eval(ctx, rec)
	}

	// Entries 1 ('2026-01-01') and 2 ('300', out of TINYINT's range)
	// are referenced by no valid row.
	rec := dictStrings(mem, entries, []int16{0, -1, 3, 0})
	out, err := run(vector.Cast(vector.Col("k"), vector.Int8), rec)
	if err != nil {
		t.Fatalf("CAST(k AS TINYINT) with bad entries no valid row refers to: %v", err)
	}
	var got []any
	for i := 0; i < out.Len(); i++ {
		got = append(got, vector.ValueAt(out, i))
	}
	if fmt.Sprint(got) != "[7 <nil> -1 7]" || out.DataType().ID() != arrow.INT8 {
		t.Errorf("CAST(k AS TINYINT) = %v, want [7 <nil> -1 7]", got)
	}
	out.Release()
	rec.Release()

	// Row 2 refers to '2026-01-01': the error is that row's.
	rec = dictStrings(mem, entries, []int16{0, -1, 1, 3})
	_, err = run(vector.Cast(vector.Col("k"), vector.Int8), rec)
	var ee *vector.EvalError
	if !errors.As(err, &ee) || ee.Row != 2 || !strings.Contains(err.Error(), "2026-01-01") {
		t.Errorf("CAST(k AS TINYINT) with row 2 = '2026-01-01': %v, want CAST_INVALID_INPUT at row 2", err)
	}
	rec.Release()

}
