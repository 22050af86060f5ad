package vector_test

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

var dictType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: vector.String}

// dictRecord builds a (k dictionary<int16,string>, v bigint) record over a
// given dictionary; a negative index is a null key.
func dictRecord(mem memory.Allocator, dict arrow.Array, idx []int16, vals []int64) arrow.Record {
	k := dictColumn(mem, dict, idx)
	defer k.Release()
	vb := array.NewInt64Builder(mem)
	defer vb.Release()
	vb.AppendValues(vals, nil)
	v := vb.NewArray()
	defer v.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: dictType, Nullable: true}, {Name: "v", Type: vector.Int64}}, nil)
	return array.NewRecord(schema, []arrow.Array{k, v}, int64(len(idx)))
}

func stringArray(mem memory.Allocator, vals ...string) arrow.Array {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.AppendValues(vals, nil)
	return b.NewArray()
}

// TestHashAggregateDictionaryKeys runs batches that share one dictionary
// (with duplicate and unreferenced entries), then one with another
// dictionary, then one with null keys.
func TestHashAggregateDictionaryKeys(t *testing.T) {
	mem := vt.NewAllocator(t)
	shared := stringArray(mem, "a", "b", "a", "unused", "c")
	other := stringArray(mem, "c", "d")
	recs := []arrow.Record{
		dictRecord(mem, shared, []int16{1, 0, 2, 1}, []int64{1, 2, 4, 8}),
		dictRecord(mem, shared, []int16{4, 4, 0}, []int64{16, 32, 64}),
		dictRecord(mem, other, []int16{1, 0}, []int64{128, 256}),
		dictRecord(mem, shared, []int16{-1, 2}, []int64{512, 1024}),
	}
	shared.Release()
	other.Release()
	defer releaseRecords(recs)
	spec := vector.AggregateSpec{GroupBy: []vector.NamedExpr{vector.As(vector.Col("k"), "k")},
		Aggregates: []vector.AggregateCall{call(vector.AggCountStar, "n"), call(vector.AggSum, "s", "v")}}
	scan, err := vector.NewScan(recs[0].Schema(), recs...)
	if err != nil {
		t.Fatal(err)
	}
	op, err := vector.NewHashAggregate(mem, scan, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	out, err := vector.Drain(context.Background(), op)
	if err != nil {
		t.Fatal(err)
	}
	got := vt.RowsOf(out...)
	releaseRecords(out)
	want := []vt.Row{{"a", 4, 1094}, {"b", 2, 9}, {"c", 3, 304}, {"d", 1, 128}, {nil, 1, 512}}
	if !vt.RowsEqual(vt.SortRows(want), vt.SortRows(got)) {
		t.Errorf("want\n%sgot\n%s", vt.FormatRows(want), vt.FormatRows(got))
	}

	// An index outside the dictionary is an error, not a panic (and the
	// dictionary retained by then is released at Close).
	small := stringArray(mem, "a")
	bad := dictRecord(mem, small, []int16{0, 3}, []int64{1, 2})
	small.Release()
	defer bad.Release()
	scan, _ = vector.NewScan(bad.Schema(), bad)
	op2, err := vector.NewHashAggregate(mem, scan, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer op2.Close()
	if _, err := op2.Next(context.Background()); err == nil {
		t.Errorf("want an error for an out-of-range dictionary index")
	}

}
