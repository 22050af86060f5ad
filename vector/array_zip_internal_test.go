package vector

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

func bindZip(t *testing.T, mem memory.Allocator) (*arrayFnEval, *arrow.Schema) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: ListOf(Int64), Nullable: true}, {Name: "b", Type: ListOf(Int64), Nullable: true}}, nil)
	f, err := LookupFunction("arrays_zip", []Expr{Col("a"), Col("b")})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := f.Bind(schema, mem)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := ev.(*arrayFnEval)
	if !ok || e.kernCtx == nil {
		t.Fatalf("arrays_zip bound to %T, want an arrayFnEval with a context kernel", ev)
	}
	return e, schema
}

// elemStr renders a model element.
func elemStr(e *int64) string {
	if e == nil {
		return "NULL"
	}
	return fmt.Sprint(*e)
}

// TestArraysZipChunkedMatchModel: arrays_zip over random arrays (NULL
// arrays, NULL elements, empty arrays, rows of different lengths and
// longer than a check interval, sliced input) gives the brute-force
// result.
func TestArraysZipChunkedMatchModel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(61, 62))
	for _, c := range []struct{ rows, maxLen int }{{200, 6}, {3, 150_000}} {
		ra := randListRows(r, c.rows+3, c.maxLen, 1000)
		rb := randListRows(r, c.rows+3, c.maxLen, 1000)
		fa, fb := buildListCol(mem, ra), buildListCol(mem, rb)
		a, b := array.NewSlice(fa, 2, int64(c.rows+2)), array.NewSlice(fb, 1, int64(c.rows+1))
		fa.Release()
		fb.Release()
		ra, rb = ra[2:c.rows+2], rb[1:c.rows+1]
		t.Run(fmt.Sprintf("%d_rows_of_%d", c.rows, c.maxLen), func(t *testing.T) {
			e, schema := bindZip(t, mem)
			rec := array.NewRecord(schema, []arrow.Array{a, b}, int64(c.rows))
			defer rec.Release()
			got, err := e.Eval(context.Background(), rec)
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			l := got.(*array.List)
			st := l.ListValues().(*array.Struct)
			x, y := st.Field(0).(*array.Int64), st.Field(1).(*array.Int64)
			at := func(c *array.Int64, k int) string {
				if c.IsNull(k) {
					return "NULL"
				}
				return fmt.Sprint(c.Value(k))
			}
			for i := range ra {
				if ra[i].null || rb[i].null {
					if l.IsValid(i) {
						t.Fatalf("row %d: not NULL, want NULL", i)
					}
					continue
				}
				lo, hi := l.ValueOffsets(i)
				if want := max(len(ra[i].elems), len(rb[i].elems)); int(hi-lo) != want {
					t.Fatalf("row %d: %d elements, want %d", i, hi-lo, want)
				}
				for j := range int(hi - lo) {
					wx, wy := "NULL", "NULL"
					if j < len(ra[i].elems) {
						wx = elemStr(ra[i].elems[j])
					}
					if j < len(rb[i].elems) {
						wy = elemStr(rb[i].elems[j])
					}
					if gx, gy := at(x, int(lo)+j), at(y, int(lo)+j); gx != wx || gy != wy {
						t.Fatalf("row %d element %d: got (%s, %s), want (%s, %s)", i, j, gx, gy, wx, wy)
					}
				}
			}
		})
		a.Release()
		b.Release()
	}
}

// TestArraysZipStopWhenCancelled: over one row of 1M elements and over
// 200K rows of 5, arrays_zip reads the context at least once per
// cancelCheckRows elements and returns at the first read after it is
// cancelled, wherever that falls.
func TestArraysZipStopWhenCancelled(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, shape := range []struct {
		name       string
		rows, size int
	}{{"one_row_of_1M", 1, 1 << 20}, {"200K_rows_of_5", 200_000, 5}} {
		rows := make([]listRow, shape.rows)
		for i := range rows {
			for k := range shape.size {
				v := int64((i*shape.size + k) % 1000)
				rows[i].elems = append(rows[i].elems, &v)
			}
		}
		col := buildListCol(mem, rows)
		elems := shape.rows * shape.size
		t.Run(shape.name, func(t *testing.T) {
			e, schema := bindZip(t, mem)
			rec := array.NewRecord(schema, []arrow.Array{col, col}, int64(shape.rows))
			defer rec.Release()
			run := func(ctx context.Context) error {
				out, err := e.Eval(ctx, rec)
				if out != nil {
					out.Release()
				}
				return err
			}
			count := &stopAfterCtx{Context: context.Background(), after: -1}
			if err := run(count); err != nil {
				t.Fatal(err)
			}
			total := count.checks
			if total < elems/cancelCheckRows {
				t.Fatalf("%d checks over %d elements, want at least one per %d", total, elems, cancelCheckRows)
			}
			for _, after := range []int{0, total / 2, total - 1} {
				ctx := &stopAfterCtx{Context: context.Background(), after: after}
				err := run(ctx)
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("cancelled after %d of %d checks: err = %v, want context.Canceled", after, total, err)
				}
				if ctx.checks != after+1 {
					t.Fatalf("cancelled after %d of %d checks: returned after %d checks, want %d", after, total, ctx.checks, after+1)
				}
			}
		})
		col.Release()
	}
}
