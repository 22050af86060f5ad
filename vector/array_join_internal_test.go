package vector

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// strListRow is a model array of strings: nil for a NULL element.
type strListRow struct {
	null  bool
	elems []*string
}

func buildStrListCol(mem memory.Allocator, rows []strListRow) arrow.Array {
	b := array.NewListBuilder(mem, String)
	defer b.Release()
	vb := b.ValueBuilder().(*array.StringBuilder)
	for _, r := range rows {
		if r.null {
			b.AppendNull()
			continue
		}
		b.Append(true)
		for _, e := range r.elems {
			if e == nil {
				vb.AppendNull()
			} else {
				vb.Append(*e)
			}
		}
	}
	return b.NewArray()
}

func modelJoin(a strListRow, repl *string) *string {
	if a.null {
		return nil
	}
	var parts []string
	for _, e := range a.elems {
		switch {
		case e != nil:
			parts = append(parts, *e)
		case repl != nil:
			parts = append(parts, *repl)
		}
	}
	s := strings.Join(parts, ", ")
	return &s
}

func bindJoin(t *testing.T, mem memory.Allocator, repl *string) (*arrayFnEval, *arrow.Schema) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: ListOf(String), Nullable: true}}, nil)
	args := []Expr{Col("a"), Lit(", ")}
	if repl != nil {
		args = append(args, Lit(*repl))
	}
	f, err := LookupFunction("array_join", args)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := f.Bind(schema, mem)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := ev.(*arrayFnEval)
	if !ok || e.kernCtx == nil {
		t.Fatalf("array_join bound to %T, want an arrayFnEval with a context kernel", ev)
	}
	return e, schema
}

// TestArrayJoinChunkedMatchModel: array_join with and without a NULL
// replacement over random arrays (NULL arrays, NULL elements, empty
// arrays, rows longer than a check interval, sliced input) gives the
// brute-force result.
func TestArrayJoinChunkedMatchModel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(51, 52))
	q := "?"
	for _, c := range []struct{ rows, maxLen int }{{200, 6}, {3, 150_000}} {
		rows := make([]strListRow, c.rows+3)
		for i := range rows {
			if r.IntN(8) == 0 {
				rows[i].null = true
				continue
			}
			rows[i].elems = []*string{}
			for range r.IntN(c.maxLen + 1) {
				if r.IntN(6) == 0 {
					rows[i].elems = append(rows[i].elems, nil)
					continue
				}
				s := strconv.Itoa(r.IntN(1000))
				rows[i].elems = append(rows[i].elems, &s)
			}
		}
		full := buildStrListCol(mem, rows)
		a := array.NewSlice(full, 2, int64(c.rows+2))
		full.Release()
		rows = rows[2 : c.rows+2]
		for _, repl := range []*string{nil, &q} {
			t.Run(fmt.Sprintf("%d_rows_of_%d/repl_%v", c.rows, c.maxLen, repl != nil), func(t *testing.T) {
				e, schema := bindJoin(t, mem, repl)
				rec := array.NewRecord(schema, []arrow.Array{a}, int64(c.rows))
				defer rec.Release()
				got, err := e.Eval(context.Background(), rec)
				if err != nil {
					t.Fatal(err)
				}
				defer got.Release()
				s := got.(*array.String)
				for i := range rows {
					want := modelJoin(rows[i], repl)
					if (want == nil) != s.IsNull(i) || want != nil && *want != s.Value(i) {
						t.Fatalf("row %d: got %q (null %v), want %v", i, s.Value(i), s.IsNull(i), want)
					}
				}
			})
		}
		a.Release()
	}
}

// TestArrayJoinStopWhenCancelled: over one row of 1M elements and over
// 200K rows of 5, array_join reads the context at least once per
// cancelCheckRows elements and returns at the first read after it is
// cancelled, wherever that falls.
func TestArrayJoinStopWhenCancelled(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, shape := range []struct {
		name       string
		rows, size int
	}{{"one_row_of_1M", 1, 1 << 20}, {"200K_rows_of_5", 200_000, 5}} {
		rows := make([]strListRow, shape.rows)
		for i := range rows {
			for k := range shape.size {
				s := strconv.Itoa((i*shape.size + k) % 1000)
				rows[i].elems = append(rows[i].elems, &s)
			}
		}
		col := buildStrListCol(mem, rows)
		elems := shape.rows * shape.size
		t.Run(shape.name, func(t *testing.T) {
			e, schema := bindJoin(t, mem, nil)
			rec := array.NewRecord(schema, []arrow.Array{col}, int64(shape.rows))
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
