package vector

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

var searchArrayFns = []string{"array_contains", "array_position", "array_remove", "array_min", "array_max"}

// modelSearch is the brute-force result of fn over array a and value v
// (nil for NULL), in modelHOF's form.
func modelSearch(name string, a listRow, v *int64) listRow {
	num := func(x int64) *int64 { return &x }
	if a.null {
		return listRow{null: true}
	}
	switch name {
	case "array_min", "array_max":
		var best *int64
		for _, e := range a.elems {
			if e != nil && (best == nil || name == "array_min" && *e < *best || name == "array_max" && *e > *best) {
				best = e
			}
		}
		if best == nil {
			return listRow{null: true}
		}
		return listRow{elems: []*int64{best}}
	}
	if v == nil {
		return listRow{null: true}
	}
	switch name {
	case "array_remove":
		out := listRow{elems: []*int64{}}
		for _, e := range a.elems {
			if e == nil || *e != *v {
				out.elems = append(out.elems, e)
			}
		}
		return out
	}
	sawNull := false
	for i, e := range a.elems {
		if e == nil {
			sawNull = true
			continue
		}
		if *e == *v {
			if name == "array_position" {
				return listRow{elems: []*int64{num(int64(i + 1))}}
			}
			return listRow{elems: []*int64{num(1)}}
		}
	}
	switch {
	case name == "array_position":
		return listRow{elems: []*int64{num(0)}}
	case sawNull:
		return listRow{null: true}
	}
	return listRow{elems: []*int64{num(0)}}
}

func bindSearchFn(t *testing.T, mem memory.Allocator, name string) (*arrayFnEval, *arrow.Schema) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: ListOf(Int64), Nullable: true}, {Name: "v", Type: Int64, Nullable: true}}, nil)
	args := []Expr{Col("a"), Col("v")}
	if name == "array_min" || name == "array_max" {
		args = args[:1]
	}
	f, err := LookupFunction(name, args)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := f.Bind(schema, mem)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := ev.(*arrayFnEval)
	if !ok || e.kernCtx == nil {
		t.Fatalf("%s bound to %T, want an arrayFnEval with a context kernel", name, ev)
	}
	return e, schema
}

func nullableInt64Col(mem memory.Allocator, vals []*int64) arrow.Array {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
		} else {
			b.Append(*v)
		}
	}
	return b.NewArray()
}

// TestArraySearchChunkedMatchModel: array_contains, array_position,
// array_remove, array_min and array_max over random arrays (NULL arrays,
// NULL elements, empty arrays, rows longer than a check interval, NULL
// searched values, sliced input) give the brute-force result.
func TestArraySearchChunkedMatchModel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(31, 32))
	for _, c := range []struct {
		rows, maxLen, distinct int
	}{{200, 6, 4}, {50, 3000, 100}, {3, 150_000, 300_000}} {
		ra := randListRows(r, c.rows+3, c.maxLen, c.distinct)
		vals := make([]*int64, c.rows+3)
		for i := range vals {
			if r.IntN(10) > 0 {
				v := int64(r.IntN(c.distinct + 2))
				vals[i] = &v
			}
		}
		fa, fv := buildListCol(mem, ra), nullableInt64Col(mem, vals)
		a, v := array.NewSlice(fa, 2, int64(c.rows+2)), array.NewSlice(fv, 2, int64(c.rows+2))
		fa.Release()
		fv.Release()
		ra, vals = ra[2:c.rows+2], vals[2:c.rows+2]
		for _, name := range searchArrayFns {
			t.Run(fmt.Sprintf("%s/%d_rows_of_%d", name, c.rows, c.maxLen), func(t *testing.T) {
				e, schema := bindSearchFn(t, mem, name)
				rec := array.NewRecord(schema, []arrow.Array{a, v}, int64(c.rows))
				defer rec.Release()
				got, err := e.Eval(context.Background(), rec)
				if err != nil {
					t.Fatal(err)
				}
				defer got.Release()
				rows := readHOFCol(t, got)
				for i := range rows {
					want := modelSearch(name, ra[i], vals[i])
					if rows[i].null != want.null || !slices.EqualFunc(rows[i].elems, want.elems, sameElem) {
						t.Fatalf("row %d: got %d elements (null %v), want %d (null %v)", i, len(rows[i].elems), rows[i].null, len(want.elems), want.null)
					}
				}
			})
		}
		a.Release()
		v.Release()
	}
}

// TestArraySearchStopWhenCancelled: over one row of 1M elements, and over
// 200K rows of 5 (the searched value in none of them), each function
// reads the context at least once per cancelCheckRows elements and
// returns at the first read after it is cancelled, wherever that falls.
func TestArraySearchStopWhenCancelled(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, shape := range []struct {
		name       string
		rows, size int
	}{{"one_row_of_1M", 1, 1 << 20}, {"200K_rows_of_5", 200_000, 5}} {
		rows := make([]listRow, shape.rows)
		vals := make([]*int64, shape.rows)
		for i := range rows {
			for k := range shape.size {
				v := int64((i*shape.size + k) % 1000)
				rows[i].elems = append(rows[i].elems, &v)
			}
			absent := int64(5000)
			vals[i] = &absent
		}
		col, vcol := buildListCol(mem, rows), nullableInt64Col(mem, vals)
		elems := shape.rows * shape.size
		for _, name := range searchArrayFns {
			t.Run(shape.name+"/"+name, func(t *testing.T) {
				e, schema := bindSearchFn(t, mem, name)
				rec := array.NewRecord(schema, []arrow.Array{col, vcol}, int64(shape.rows))
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
		}
		col.Release()
		vcol.Release()
	}
}
