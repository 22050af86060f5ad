package vector

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// sequenceKernel binds sequence(a, b) over two BIGINT columns and returns
// its evaluator.
func sequenceKernel(t *testing.T, mem memory.Allocator) (*arrayFnEval, *arrow.Schema) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: Int64, Nullable: true}, {Name: "b", Type: Int64, Nullable: true}}, nil)
	f, err := LookupFunction("sequence", []Expr{Col("a"), Col("b")})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := f.Bind(schema, mem)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := ev.(*arrayFnEval)
	if !ok || e.kernCtx == nil {
		t.Fatalf("sequence bound to %T, want an arrayFnEval with a context kernel", ev)
	}
	return e, schema
}

func int64Col(mem memory.Allocator, vals []int64, nullEvery int) arrow.Array {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	for i, v := range vals {
		if nullEvery > 0 && i%nullEvery == nullEvery-1 {
			b.AppendNull()
			continue
		}
		b.Append(v)
	}
	return b.NewArray()
}

// TestSequenceStopsWhenCancelled: building a batch's sequences (many rows of
// 100 elements, or one row of 5M) returns the context's error at its first
// check, after cancelCheckRows elements, rather than building them all.
func TestSequenceStopsWhenCancelled(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	e, _ := sequenceKernel(t, mem)
	for _, c := range []struct {
		name       string
		rows, size int64
	}{{"64K_rows_of_100", 64 << 10, 100}, {"one_row_of_5M", 1, 5_000_000}} {
		t.Run(c.name, func(t *testing.T) {
			starts, stops := make([]int64, c.rows), make([]int64, c.rows)
			for i := range starts {
				starts[i] = int64(i)
				stops[i] = int64(i) + c.size - 1
			}
			a, b := int64Col(mem, starts, 0), int64Col(mem, stops, 0)
			defer a.Release()
			defer b.Release()
			ctx := &checkCountCtx{Context: context.Background()}
			out, err := e.kernCtx(ctx, e, []arrow.Array{a, b}, int(c.rows))
			if out != nil {
				out.Release()
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if ctx.checks != 1 {
				t.Fatalf("read the context %d times, want once", ctx.checks)
			}
		})
	}
}

// TestSequenceChunkedMatchesModel: sequences whose elements cross the
// kernel's check points (rows of 0 to 70K elements, up and down, with null
// rows) are the brute-force ones.
func TestSequenceChunkedMatchesModel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	e, _ := sequenceKernel(t, mem)
	sizes := []int64{1, 70_000, 3, 65_535, 65_537, 0, 100, 40_000, 1}
	var starts, stops []int64
	for i := 0; i < 90; i++ {
		sz := sizes[i%len(sizes)]
		start := int64(i * 7)
		if i%2 == 0 {
			starts, stops = append(starts, start), append(stops, start+sz)
		} else {
			starts, stops = append(starts, start), append(stops, start-sz)
		}
	}
	const nullEvery = 13
	a, b := int64Col(mem, starts, nullEvery), int64Col(mem, stops, 0)
	defer a.Release()
	defer b.Release()
	out, err := e.kernCtx(context.Background(), e, []arrow.Array{a, b}, len(starts))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	l := out.(*array.List)
	vals := l.ListValues().(*array.Int64)
	for r := range starts {
		if r%nullEvery == nullEvery-1 {
			if l.IsValid(r) {
				t.Fatalf("row %d: not null, want null (null start)", r)
			}
			continue
		}
		lo, hi := l.ValueOffsets(r)
		step := int64(1)
		if stops[r] < starts[r] {
			step = -1
		}
		want := (stops[r]-starts[r])*step + 1
		if hi-lo != want {
			t.Fatalf("row %d: %d elements, want %d", r, hi-lo, want)
		}
		for k := int64(0); k < want; k++ {
			if g := vals.Value(int(lo + k)); g != starts[r]+k*step {
				t.Fatalf("row %d element %d: %d, want %d", r, k, g, starts[r]+k*step)
			}
		}
	}
}

// TestArrayRepeatStopsWhenCancelled: array_repeat of one row 5M times stops
// at its first check of a cancelled context, after cancelCheckRows
// elements.
func TestArrayRepeatStopsWhenCancelled(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: Int64, Nullable: true}, {Name: "b", Type: Int64, Nullable: true}}, nil)
	f, err := LookupFunction("array_repeat", []Expr{Col("a"), Col("b")})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := f.Bind(schema, mem)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := ev.(*arrayFnEval)
	if !ok || e.kernCtx == nil {
		t.Fatalf("array_repeat bound to %T, want an arrayFnEval with a context kernel", ev)
	}
	a, b := int64Col(mem, []int64{7, 8}, 0), int64Col(mem, []int64{5_000_000, 3}, 0)
	defer a.Release()
	defer b.Release()
	ctx := &checkCountCtx{Context: context.Background()}
	out, err := e.kernCtx(ctx, e, []arrow.Array{a, b}, 2)
	if out != nil {
		out.Release()
	}
	if !errors.Is(err, context.Canceled) || ctx.checks != 1 {
		t.Fatalf("err = %v after %d checks, want context.Canceled at the first", err, ctx.checks)
	}
	// Uncancelled, the rows are x repeated.
	out, err = e.kernCtx(context.Background(), e, []arrow.Array{a, b}, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	l := out.(*array.List)
	vals := l.ListValues().(*array.Int64)
	for r, want := range []struct{ x, n int64 }{{7, 5_000_000}, {8, 3}} {
		lo, hi := l.ValueOffsets(r)
		if hi-lo != want.n {
			t.Fatalf("row %d: %d elements, want %d", r, hi-lo, want.n)
		}
		for k := lo; k < hi; k++ {
			if vals.Value(int(k)) != want.x {
				t.Fatalf("row %d element %d: %d, want %d", r, k-lo, vals.Value(int(k)), want.x)
			}
		}
	}
}

// TestListBuildContext: the gather that assembles the lists of
// array_repeat (and any listOut) stops at its first check, after its
// first chunk of elements, when cancelled, and otherwise equals build.
func TestListBuildContext(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	child := int64Col(mem, []int64{1, 2, 3, 4, 5}, 4)
	defer child.Release()
	out := newListOut(3)
	for r, size := range []int{bigRows, 0, 70_001} {
		if r == 1 {
			out.nullRow()
			continue
		}
		for k := range size {
			out.idx = append(out.idx, int32((k*7+r)%5))
		}
		out.endRow(true)
	}
	dt := ListOf(Int64)
	ctx := &checkCountCtx{Context: context.Background()}
	got, err := out.buildContext(ctx, mem, dt, child)
	if got != nil {
		got.Release()
	}
	if !errors.Is(err, context.Canceled) || ctx.checks != 1 {
		t.Fatalf("err = %v after %d checks, want context.Canceled at the first", err, ctx.checks)
	}
	got, err = out.buildContext(context.Background(), mem, dt, child)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	want, err := out.build(mem, dt, child)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Release()
	if !array.Equal(got, want) {
		t.Fatal("buildContext differs from build")
	}
}

// TestSequenceNarrowTypesMatchModel: sequences of INT, SMALLINT and DATE
// elements (written straight into their own type's buffer) crossing the
// kernel's check points are the brute-force ones.
func TestSequenceNarrowTypesMatchModel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	starts := []int64{0, 30_000, -5, 100}
	stops := []int64{29_000, -20_000, 70_000, 100}
	for _, dt := range []arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int16, arrow.FixedWidthTypes.Date32} {
		t.Run(TypeName(dt), func(t *testing.T) {
			schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: dt}, {Name: "b", Type: dt}}, nil)
			f, err := LookupFunction("sequence", []Expr{Col("a"), Col("b")})
			if err != nil {
				t.Fatal(err)
			}
			ev, err := f.Bind(schema, mem)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if c, ok := ev.(interface{ Release() }); ok {
					c.Release()
				}
			}()
			mk := func(vals []int64) arrow.Array {
				b := array.NewBuilder(mem, dt)
				defer b.Release()
				for _, v := range vals {
					switch x := b.(type) {
					case *array.Int32Builder:
						x.Append(int32(v))
					case *array.Int16Builder:
						x.Append(int16(max(min(v, 32767), -32768)))
					case *array.Date32Builder:
						x.Append(arrow.Date32(v))
					}
				}
				return b.NewArray()
			}
			a, b := mk(starts), mk(stops)
			rec := array.NewRecord(schema, []arrow.Array{a, b}, int64(len(starts)))
			a.Release()
			b.Release()
			defer rec.Release()
			out, err := ev.Eval(context.Background(), rec)
			if err != nil {
				t.Fatal(err)
			}
			defer out.Release()
			l := out.(*array.List)
			for r := range starts {
				s, e := starts[r], stops[r]
				if dt.ID() == arrow.INT16 {
					s, e = max(min(s, 32767), -32768), max(min(e, 32767), -32768)
				}
				step := int64(1)
				if e < s {
					step = -1
				}
				lo, hi := l.ValueOffsets(r)
				if want := (e-s)*step + 1; hi-lo != want {
					t.Fatalf("row %d: %d elements, want %d", r, hi-lo, want)
				}
				elems := array.NewSlice(l.ListValues(), lo, hi)
				for k := 0; k < elems.Len(); k++ {
					var g int64
					switch x := elems.(type) {
					case *array.Int32:
						g = int64(x.Value(k))
					case *array.Int16:
						g = int64(x.Value(k))
					case *array.Date32:
						g = int64(x.Value(k))
					}
					if w := s + int64(k)*step; g != w {
						elems.Release()
						t.Fatalf("row %d element %d: %d, want %d", r, k, g, w)
					}
				}
				elems.Release()
			}
		})
	}
}
