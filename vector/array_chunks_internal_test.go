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

// listRow is a model array: nil for a NULL array, elements nil for NULL.
type listRow struct {
	null  bool
	elems []*int64
}

// stopAfterCtx reads as not cancelled for its first after reads of Err and
// as cancelled from then on, counting every read.
type stopAfterCtx struct {
	context.Context
	after, checks int
}

func (c *stopAfterCtx) Err() error {
	c.checks++
	if c.after >= 0 && c.checks > c.after {
		return context.Canceled
	}
	return nil
}

func buildListCol(mem memory.Allocator, rows []listRow) arrow.Array {
	b := array.NewListBuilder(mem, Int64)
	defer b.Release()
	vb := b.ValueBuilder().(*array.Int64Builder)
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

func randListRows(r *rand.Rand, n, maxLen, distinct int) []listRow {
	rows := make([]listRow, n)
	for i := range rows {
		if r.IntN(9) == 0 {
			rows[i].null = true
			continue
		}
		size := r.IntN(maxLen + 1)
		if r.IntN(7) == 0 {
			size = 0
		}
		for range size {
			if r.IntN(11) == 0 {
				rows[i].elems = append(rows[i].elems, nil)
				continue
			}
			v := int64(r.IntN(distinct))
			rows[i].elems = append(rows[i].elems, &v)
		}
	}
	return rows
}

// readListCol is the model rows of a list column (of BIGINT elements).
func readListCol(a arrow.Array) []listRow {
	l := a.(*array.List)
	vals := l.ListValues().(*array.Int64)
	rows := make([]listRow, l.Len())
	for i := range rows {
		if l.IsNull(i) {
			rows[i].null = true
			continue
		}
		s, e := l.ValueOffsets(i)
		for j := s; j < e; j++ {
			if vals.IsNull(int(j)) {
				rows[i].elems = append(rows[i].elems, nil)
			} else {
				v := vals.Value(int(j))
				rows[i].elems = append(rows[i].elems, &v)
			}
		}
	}
	return rows
}

func sameElem(a, b *int64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

// elemKey is a model element as a map key.
type elemKey struct {
	null bool
	v    int64
}

func keyOf(e *int64) elemKey {
	if e == nil {
		return elemKey{null: true}
	}
	return elemKey{v: *e}
}

// modelArrayFn is the brute-force result of one row of each function.
func modelArrayFn(name string, a, b listRow, start, length int64) listRow {
	if a.null || b.null && (name == "array_union" || name == "array_intersect" || name == "array_except" || name == "concat") {
		return listRow{null: true}
	}
	var out []*int64
	switch name {
	case "reverse":
		for i := len(a.elems) - 1; i >= 0; i-- {
			out = append(out, a.elems[i])
		}
	case "array_compact":
		for _, e := range a.elems {
			if e != nil {
				out = append(out, e)
			}
		}
	case "slice":
		size := int64(len(a.elems))
		from := start - 1
		if start < 0 {
			from = size + start
		}
		if from >= 0 && from < size {
			out = append(out, a.elems[from:min(from+length, size)]...)
		}
	case "concat":
		out = append(append(out, a.elems...), b.elems...)
	case "array_distinct", "array_union", "array_intersect", "array_except":
		all := a.elems
		if name == "array_union" {
			all = append(slices.Clone(a.elems), b.elems...)
		}
		var inB map[elemKey]bool
		if name == "array_intersect" || name == "array_except" {
			inB = map[elemKey]bool{}
			for _, e := range b.elems {
				inB[keyOf(e)] = true
			}
		}
		seen := map[elemKey]bool{}
		for _, e := range all {
			k := keyOf(e)
			if inB != nil && inB[k] != (name == "array_intersect") || seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, e)
		}
	}
	return listRow{elems: out}
}

var chunkedArrayFns = []string{"reverse", "array_compact", "slice", "concat", "array_distinct", "array_union", "array_intersect", "array_except"}

// bindArrayFn binds name over list columns a, b (and slice's start 2 and
// length), returning its context kernel.
func bindArrayFn(t *testing.T, mem memory.Allocator, name string, start, length int64) (*arrayFnEval, *arrow.Schema) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: ListOf(Int64), Nullable: true}, {Name: "b", Type: ListOf(Int64), Nullable: true}}, nil)
	var args []Expr
	switch name {
	case "slice":
		args = []Expr{Col("a"), TypedLit(Int64, start), TypedLit(Int64, length)}
	case "concat", "array_union", "array_intersect", "array_except":
		args = []Expr{Col("a"), Col("b")}
	default:
		args = []Expr{Col("a")}
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

// TestArrayFnsChunkedMatchModel: reverse, array_compact, slice, concat and
// the set functions over random arrays (NULL arrays, NULL elements, empty
// arrays, rows longer than a check interval, sliced input columns) give
// the brute-force result.
func TestArrayFnsChunkedMatchModel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(11, 12))
	for _, c := range []struct {
		rows, maxLen, distinct int
	}{{200, 6, 4}, {50, 3000, 100}, {3, 150_000, 70_000}} {
		ra := randListRows(r, c.rows+3, c.maxLen, c.distinct)
		rb := randListRows(r, c.rows+3, c.maxLen, c.distinct)
		fa, fb := buildListCol(mem, ra), buildListCol(mem, rb)
		// Sliced columns: offsets that do not start at zero.
		a, b := array.NewSlice(fa, 2, int64(c.rows+2)), array.NewSlice(fb, 1, int64(c.rows+1))
		fa.Release()
		fb.Release()
		ra, rb = ra[2:c.rows+2], rb[1:c.rows+1]
		for _, name := range chunkedArrayFns {
			for _, sl := range [][2]int64{{2, 1 << 20}, {-5, 3}} {
				if name != "slice" && sl[0] != 2 {
					continue
				}
				t.Run(fmt.Sprintf("%s/%d_rows_of_%d/%v", name, c.rows, c.maxLen, sl), func(t *testing.T) {
					e, schema := bindArrayFn(t, mem, name, sl[0], sl[1])
					rec := array.NewRecord(schema, []arrow.Array{a, b}, int64(c.rows))
					defer rec.Release()
					got, err := e.Eval(context.Background(), rec)
					if err != nil {
						t.Fatal(err)
					}
					defer got.Release()
					rows := readListCol(got)
					for i := range rows {
						want := modelArrayFn(name, ra[i], rb[i], sl[0], sl[1])
						if rows[i].null != want.null || !slices.EqualFunc(rows[i].elems, want.elems, sameElem) {
							t.Fatalf("row %d: got %d elements (null %v), want %d (null %v)", i, len(rows[i].elems), rows[i].null, len(want.elems), want.null)
						}
					}
				})
			}
		}
		a.Release()
		b.Release()
	}
}

// TestArrayFnsStopWhenCancelled: over one row of 1M elements, and over
// 200K rows of 5, each function reads the context at least once per
// cancelCheckRows elements, and returns the context's error at the first
// read after it is cancelled, wherever that falls (its first check, the
// middle, the last), leaving no memory behind.
func TestArrayFnsStopWhenCancelled(t *testing.T) {
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
		for _, name := range chunkedArrayFns {
			t.Run(shape.name+"/"+name, func(t *testing.T) {
				e, schema := bindArrayFn(t, mem, name, 1, int64(shape.size))
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
		}
		col.Release()
	}
}

// TestFlattenChunkedMatchesModel: flatten over random arrays of arrays
// (NULL outer and inner arrays, empty ones, an inner array longer than a
// check interval, a sliced input) gives the brute-force result, and over
// one row of one 1M-element inner array it returns at the first read of
// the context after a cancel, wherever that falls.
func TestFlattenChunkedMatchesModel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(5, 6))
	type outerRow struct {
		null  bool
		inner []listRow
	}
	rows := make([]outerRow, 120)
	for i := range rows {
		if r.IntN(8) == 0 {
			rows[i].null = true
			continue
		}
		maxLen := 5
		if i == 7 {
			maxLen = 150_000
		}
		rows[i].inner = randListRows(r, r.IntN(4), maxLen, 50)
	}
	dt := ListOf(ListOf(Int64))
	b := array.NewListBuilder(mem, ListOf(Int64))
	ib := b.ValueBuilder().(*array.ListBuilder)
	vb := ib.ValueBuilder().(*array.Int64Builder)
	for _, o := range rows {
		if o.null {
			b.AppendNull()
			continue
		}
		b.Append(true)
		for _, in := range o.inner {
			if in.null {
				ib.AppendNull()
				continue
			}
			ib.Append(true)
			for _, e := range in.elems {
				if e == nil {
					vb.AppendNull()
				} else {
					vb.Append(*e)
				}
			}
		}
	}
	full := b.NewArray()
	b.Release()
	col := array.NewSlice(full, 1, int64(len(rows)))
	full.Release()
	defer col.Release()
	rows = rows[1:]
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: dt, Nullable: true}}, nil)
	f, err := LookupFunction("flatten", []Expr{Col("a")})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := f.Bind(schema, mem)
	if err != nil {
		t.Fatal(err)
	}
	rec := array.NewRecord(schema, []arrow.Array{col}, int64(col.Len()))
	defer rec.Release()
	got, err := ev.Eval(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	out := readListCol(got)
	for i, o := range rows {
		want := listRow{null: o.null}
		for _, in := range o.inner {
			if in.null {
				want = listRow{null: true}
				break
			}
			want.elems = append(want.elems, in.elems...)
		}
		if out[i].null != want.null || !slices.EqualFunc(out[i].elems, want.elems, sameElem) {
			t.Fatalf("row %d: got %d elements (null %v), want %d (null %v)", i, len(out[i].elems), out[i].null, len(want.elems), want.null)
		}
	}

	// One row of one inner array of 1M elements.
	b = array.NewListBuilder(mem, ListOf(Int64))
	ib = b.ValueBuilder().(*array.ListBuilder)
	vb = ib.ValueBuilder().(*array.Int64Builder)
	b.Append(true)
	ib.Append(true)
	for k := range 1 << 20 {
		vb.Append(int64(k))
	}
	big := b.NewArray()
	b.Release()
	defer big.Release()
	brec := array.NewRecord(schema, []arrow.Array{big}, 1)
	defer brec.Release()
	run := func(ctx context.Context) error {
		out, err := ev.Eval(ctx, brec)
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
	if total < (1<<20)/cancelCheckRows {
		t.Fatalf("%d checks over 1M elements, want at least one per %d", total, cancelCheckRows)
	}
	for _, after := range []int{0, total / 2, total - 1} {
		ctx := &stopAfterCtx{Context: context.Background(), after: after}
		if err := run(ctx); !errors.Is(err, context.Canceled) || ctx.checks != after+1 {
			t.Fatalf("cancelled after %d of %d checks: err %v after %d checks, want context.Canceled after %d", after, total, err, ctx.checks, after+1)
		}
	}
}
