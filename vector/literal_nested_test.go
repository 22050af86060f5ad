package vector

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// nestedConstants are constants of nested types, each with its Go value.
var nestedConstants = []struct {
	name string
	dt   arrow.DataType
	v    any
}{
	{"list", arrow.ListOf(Int64), []any{int64(1), int64(2), int64(3)}},
	{"list_with_null", arrow.ListOf(Int64), []any{int64(1), nil, int64(3)}},
	{"list_of_int32", arrow.ListOf(arrow.PrimitiveTypes.Int32), []any{int32(-1), int32(5)}},
	{"list_of_doubles", arrow.ListOf(Float64), []any{1.5, 2.5, 3.5, 4.5, 5.5}},
	{"empty_list", arrow.ListOf(Int64), []any{}},
	{"list_of_strings", arrow.ListOf(String), []any{"a", "bc", nil}},
	{"list_of_lists", arrow.ListOf(arrow.ListOf(Int64)), []any{[]any{int64(1)}, nil, []any{}}},
	{"struct", arrow.StructOf(arrow.Field{Name: "a", Type: Int64, Nullable: true}, arrow.Field{Name: "b", Type: String, Nullable: true}),
		[]any{int64(7), "x"}},
}

// TestNestedConstantExpansion: a nested constant expanded over a batch
// (built once, gathered) equals the row-by-row expansion, for batch sizes
// around the chunk size, on a checked allocator that ends at zero.
func TestNestedConstantExpansion(t *testing.T) {
	for _, c := range nestedConstants {
		for _, n := range []int{0, 1, 2, 1000, cancelCheckRows, cancelCheckRows + 3} {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			want, err := MakeConstantArray(mem, c.dt, c.v, n)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			rec := array.NewRecord(arrow.NewSchema(nil, nil), nil, int64(n))
			got, err := (&constEval{dt: c.dt, v: c.v, mem: mem}).Eval(context.Background(), rec)
			if err != nil {
				t.Fatalf("%s over %d rows: %v", c.name, n, err)
			}
			if !array.Equal(got, want) {
				t.Fatalf("%s over %d rows: gathered %v, want %v", c.name, n, got, want)
			}
			got.Release()
			want.Release()
			rec.Release()
			mem.AssertSize(t, 0)
		}
	}
}

// TestNestedConstantStopsWhenCancelled: expanding a nested constant over a
// batch returns the context's error once it is cancelled, holding nothing.
func TestNestedConstantStopsWhenCancelled(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := array.NewRecord(arrow.NewSchema(nil, nil), nil, 4*cancelCheckRows)
	defer rec.Release()
	_, err := (&constEval{dt: arrow.ListOf(Int64), v: []any{int64(1)}, mem: mem}).Eval(ctx, rec)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	mem.AssertSize(t, 0)
}

// BenchmarkNestedConstantExpansion expands a 200-element array constant
// over a 64K-row batch: row_by_row is the Go value appended per row (the
// expansion before), gathered the array built once and gathered.
func BenchmarkNestedConstantExpansion(b *testing.B) {
	v := make([]any, 200)
	for i := range v {
		v[i] = int64(i)
	}
	dt := arrow.ListOf(Int64)
	const rows = 64 << 10
	rec := array.NewRecord(arrow.NewSchema(nil, nil), nil, rows)
	defer rec.Release()
	mem := memory.NewGoAllocator()
	b.Run("row_by_row", func(b *testing.B) {
		for range b.N {
			a, err := MakeConstantArray(mem, dt, v, rows)
			if err != nil {
				b.Fatal(err)
			}
			a.Release()
		}
	})
	b.Run("gathered", func(b *testing.B) {
		ev := &constEval{dt: dt, v: v, mem: mem}
		for range b.N {
			a, err := ev.Eval(context.Background(), rec)
			if err != nil {
				b.Fatal(err)
			}
			a.Release()
		}
	})
}
