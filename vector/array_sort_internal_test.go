package vector

import (
	"cmp"
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

// sortCases are the sorts under test: sort_array ascending (NULLs first),
// sort_array(a, false) (descending, NULLs last), array_sort (ascending,
// NULLs last).
var sortCases = []struct {
	name             string
	desc, nullsFirst bool
}{{"sort_array", false, true}, {"sort_array_desc", true, false}, {"array_sort", false, false}}

func bindSortFn(t *testing.T, mem memory.Allocator, name string) (*arrayFnEval, *arrow.Schema) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: ListOf(Int64), Nullable: true}}, nil)
	args := []Expr{Col("a")}
	fn := name
	if name == "sort_array_desc" {
		fn, args = "sort_array", append(args, Lit(false))
	}
	f, err := LookupFunction(fn, args)
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

func modelSort(a listRow, desc, nullsFirst bool) listRow {
	if a.null {
		return a
	}
	out := listRow{elems: slices.Clone(a.elems)}
	slices.SortFunc(out.elems, func(x, y *int64) int {
		switch {
		case x == nil && y == nil:
			return 0
		case x == nil:
			return map[bool]int{true: -1, false: 1}[nullsFirst]
		case y == nil:
			return map[bool]int{true: 1, false: -1}[nullsFirst]
		case desc:
			return cmp.Compare(*y, *x)
		}
		return cmp.Compare(*x, *y)
	})
	return out
}

// TestArraySortChunkedMatchModel: the sorts over random arrays (NULL
// arrays, NULL elements, empty arrays, rows of several 64K runs merged,
// sliced input) give the brute-force result.
func TestArraySortChunkedMatchModel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(41, 42))
	for _, c := range []struct {
		rows, maxLen, distinct int
	}{{200, 6, 4}, {50, 3000, 100}, {4, 300_000, 50_000}} {
		ra := randListRows(r, c.rows+3, c.maxLen, c.distinct)
		fa := buildListCol(mem, ra)
		a := array.NewSlice(fa, 2, int64(c.rows+2))
		fa.Release()
		ra = ra[2 : c.rows+2]
		for _, sc := range sortCases {
			t.Run(fmt.Sprintf("%s/%d_rows_of_%d", sc.name, c.rows, c.maxLen), func(t *testing.T) {
				e, schema := bindSortFn(t, mem, sc.name)
				rec := array.NewRecord(schema, []arrow.Array{a}, int64(c.rows))
				defer rec.Release()
				got, err := e.Eval(context.Background(), rec)
				if err != nil {
					t.Fatal(err)
				}
				defer got.Release()
				rows := readListCol(got)
				for i := range rows {
					want := modelSort(ra[i], sc.desc, sc.nullsFirst)
					if rows[i].null != want.null || !slices.EqualFunc(rows[i].elems, want.elems, sameElem) {
						t.Fatalf("row %d: got %d elements (null %v), want %d (null %v)", i, len(rows[i].elems), rows[i].null, len(want.elems), want.null)
					}
				}
			})
		}
		a.Release()
	}
}

// TestArraySortStopWhenCancelled: over one row of 1M elements (sorted in
// runs, then merged) and over 200K rows of 5, the sorts read the context
// at least once per cancelCheckRows elements and return at the first read
// after it is cancelled, wherever that falls.
func TestArraySortStopWhenCancelled(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, shape := range []struct {
		name       string
		rows, size int
	}{{"one_row_of_1M", 1, 1 << 20}, {"200K_rows_of_5", 200_000, 5}} {
		rows := make([]listRow, shape.rows)
		for i := range rows {
			for k := range shape.size {
				v := int64((i*shape.size + k) * 7919 % 100_003)
				rows[i].elems = append(rows[i].elems, &v)
			}
		}
		col := buildListCol(mem, rows)
		elems := shape.rows * shape.size
		for _, sc := range sortCases {
			t.Run(shape.name+"/"+sc.name, func(t *testing.T) {
				e, schema := bindSortFn(t, mem, sc.name)
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
		}
		col.Release()
	}
}

// TestSortRunsStable: sortRunsContext keeps equal keys in their input
// order across run boundaries, like one stable sort.
func TestSortRunsStable(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([]int32, 5*cancelCheckRows+123)
	for i := range keys {
		keys[i] = int32(r.IntN(50))
	}
	row := make([]int32, len(keys))
	for i := range row {
		row[i] = int32(i)
	}
	byKey := func(a, b int32) int { return cmp.Compare(keys[a], keys[b]) }
	want := slices.Clone(row)
	slices.SortStableFunc(want, byKey)
	if _, err := sortRunsContext(newElemBudget(context.Background()), row, nil, byKey); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(row, want) {
		t.Fatal("the merged runs differ from one stable sort")
	}
}
