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

// The higher-order functions under test, each with a lambda over the
// bigint arrays a (and b): transform(a, (x, i) -> x + i), filter(a, x ->
// x % 3 = 0), exists(a, x -> x > 90), forall(a, x -> x < 990),
// zip_with(a, b, (x, y) -> x + y), aggregate(a, 0, (acc, x) -> acc + x).
var chunkedHOFs = []string{"transform", "filter", "exists", "forall", "zip_with", "aggregate"}

func hofExpr(name string) Expr {
	x := &LambdaVar{Name: "x#λ1:1", Type: Int64}
	lit := func(v int64) Expr { return TypedLit(Int64, v) }
	one := func(body Expr, params ...string) []*Lambda {
		return []*Lambda{{Params: params, Body: body}}
	}
	a, b := Col("a"), Col("b")
	switch name {
	case "transform":
		return &HigherOrder{Name: name, Args: []Expr{a}, Fns: one(Add(x, Cast(&LambdaVar{Name: "i#λ1:1", Type: Int32}, Int64)), x.Name, "i#λ1:1")}
	case "filter":
		return &HigherOrder{Name: name, Args: []Expr{a}, Fns: one(Eq(Mod(x, lit(3)), lit(0)), x.Name)}
	case "exists":
		return &HigherOrder{Name: name, Args: []Expr{a}, Fns: one(Gt(x, lit(90)), x.Name)}
	case "forall":
		return &HigherOrder{Name: name, Args: []Expr{a}, Fns: one(Lt(x, lit(990)), x.Name)}
	case "zip_with":
		return &HigherOrder{Name: name, Args: []Expr{a, b}, Fns: one(Add(x, &LambdaVar{Name: "y#λ1:1", Type: Int64}), x.Name, "y#λ1:1")}
	case "aggregate":
		acc := &LambdaVar{Name: "acc#λ1:1", Type: Int64}
		return &HigherOrder{Name: name, Args: []Expr{a, lit(0)}, Fns: one(Add(acc, x), acc.Name, x.Name)}
	}
	panic(name)
}

// hofResult is a model result: an array (list), or a scalar in list's
// first element (exists, forall, aggregate), NULL as null.
func modelHOF(name string, a, b listRow) listRow {
	num := func(v int64) *int64 { return &v }
	switch name {
	case "transform", "filter":
		if a.null {
			return listRow{null: true}
		}
		out := listRow{elems: []*int64{}}
		for i, e := range a.elems {
			if name == "transform" {
				if e == nil {
					out.elems = append(out.elems, nil)
				} else {
					out.elems = append(out.elems, num(*e+int64(i)))
				}
			} else if e != nil && *e%3 == 0 {
				out.elems = append(out.elems, e)
			}
		}
		return out
	case "exists", "forall":
		if a.null {
			return listRow{null: true}
		}
		sawNull := false
		for _, e := range a.elems {
			if e == nil {
				sawNull = true
				continue
			}
			if name == "exists" && *e > 90 {
				return listRow{elems: []*int64{num(1)}}
			}
			if name == "forall" && *e >= 990 {
				return listRow{elems: []*int64{num(0)}}
			}
		}
		if sawNull {
			return listRow{null: true}
		}
		if name == "exists" {
			return listRow{elems: []*int64{num(0)}}
		}
		return listRow{elems: []*int64{num(1)}}
	case "zip_with":
		if a.null || b.null {
			return listRow{null: true}
		}
		out := listRow{elems: []*int64{}}
		for j := range max(len(a.elems), len(b.elems)) {
			if j >= len(a.elems) || j >= len(b.elems) || a.elems[j] == nil || b.elems[j] == nil {
				out.elems = append(out.elems, nil)
				continue
			}
			out.elems = append(out.elems, num(*a.elems[j]+*b.elems[j]))
		}
		return out
	case "aggregate":
		if a.null {
			return listRow{null: true}
		}
		s := int64(0)
		for _, e := range a.elems {
			if e == nil {
				return listRow{null: true}
			}
			s += *e
		}
		return listRow{elems: []*int64{num(s)}}
	}
	panic(name)
}

// readHOFCol reads a result in modelHOF's form.
func readHOFCol(t *testing.T, a arrow.Array) []listRow {
	t.Helper()
	switch c := a.(type) {
	case *array.List:
		return readListCol(c)
	case *array.Boolean, *array.Int64:
		out := make([]listRow, a.Len())
		for i := range out {
			if a.IsNull(i) {
				out[i].null = true
				continue
			}
			var v int64
			if bc, ok := c.(*array.Boolean); ok {
				if bc.Value(i) {
					v = 1
				}
			} else {
				v = c.(*array.Int64).Value(i)
			}
			out[i].elems = []*int64{&v}
		}
		return out
	}
	t.Fatalf("result of type %s", a.DataType())
	return nil
}

func bindHOF(t *testing.T, mem memory.Allocator, name string) (Evaluator, *arrow.Schema) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: ListOf(Int64), Nullable: true}, {Name: "b", Type: ListOf(Int64), Nullable: true}}, nil)
	ev, err := hofExpr(name).Bind(schema, mem)
	if err != nil {
		t.Fatal(err)
	}
	return ev, schema
}

// TestHigherOrderChunkedMatchModel: the higher-order functions over random
// arrays (NULL arrays, NULL elements, empty arrays, rows longer than a
// check interval so that the lambda runs in several slices, sliced input
// columns) give the brute-force result.
func TestHigherOrderChunkedMatchModel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(21, 22))
	for _, c := range []struct {
		rows, maxLen int
	}{{200, 6}, {60, 3000}, {3, 150_000}} {
		ra := randListRows(r, c.rows+3, c.maxLen, 1000)
		rb := randListRows(r, c.rows+3, c.maxLen, 1000)
		fa, fb := buildListCol(mem, ra), buildListCol(mem, rb)
		a, b := array.NewSlice(fa, 2, int64(c.rows+2)), array.NewSlice(fb, 1, int64(c.rows+1))
		fa.Release()
		fb.Release()
		ra, rb = ra[2:c.rows+2], rb[1:c.rows+1]
		for _, name := range chunkedHOFs {
			if name == "aggregate" && c.maxLen > 3000 {
				continue // a step per element position: slow by design
			}
			t.Run(fmt.Sprintf("%s/%d_rows_of_%d", name, c.rows, c.maxLen), func(t *testing.T) {
				ev, schema := bindHOF(t, mem, name)
				rec := array.NewRecord(schema, []arrow.Array{a, b}, int64(c.rows))
				defer rec.Release()
				got, err := ev.Eval(context.Background(), rec)
				if err != nil {
					t.Fatal(err)
				}
				defer got.Release()
				rows := readHOFCol(t, got)
				for i := range rows {
					want := modelHOF(name, ra[i], rb[i])
					if rows[i].null != want.null || !slices.EqualFunc(rows[i].elems, want.elems, sameElem) {
						t.Fatalf("row %d: got %d elements (null %v), want %d (null %v)", i, len(rows[i].elems), rows[i].null, len(want.elems), want.null)
					}
				}
			})
		}
		a.Release()
		b.Release()
	}
}

// TestHigherOrderStopWhenCancelled: over one row of 1M elements, and over
// 200K rows of 5, each higher-order function reads the context at least
// once per cancelCheckRows elements and returns the context's error at
// the first read after it is cancelled, wherever that falls (first,
// middle, last read), leaving no memory behind. aggregate, a step per
// element position, runs over one row of 66K elements.
func TestHigherOrderStopWhenCancelled(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, shape := range []struct {
		name       string
		rows, size int
	}{{"one_row_of_1M", 1, 1 << 20}, {"200K_rows_of_5", 200_000, 5}, {"one_row_of_66K", 1, 66_000}} {
		rows := make([]listRow, shape.rows)
		for i := range rows {
			for k := range shape.size {
				v := int64((i*shape.size + k) % 1000)
				rows[i].elems = append(rows[i].elems, &v)
			}
		}
		col := buildListCol(mem, rows)
		elems := shape.rows * shape.size
		for _, name := range chunkedHOFs {
			if (name == "aggregate") != (shape.name == "one_row_of_66K") && shape.rows == 1 {
				continue
			}
			t.Run(shape.name+"/"+name, func(t *testing.T) {
				ev, schema := bindHOF(t, mem, name)
				rec := array.NewRecord(schema, []arrow.Array{col, col}, int64(shape.rows))
				defer rec.Release()
				run := func(ctx context.Context) error {
					out, err := ev.Eval(ctx, rec)
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

// TestLambdaEvaluatedInSlices: the lambda's body never sees more than
// cancelCheckRows elements in one Eval, so a body whose kernels do not
// read the context cannot run over a whole batch uninterrupted.
func TestLambdaEvaluatedInSlices(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rows := []listRow{{elems: make([]*int64, 300_000)}}
	col := buildListCol(mem, rows)
	defer col.Release()
	for _, name := range []string{"transform", "filter", "exists", "zip_with"} {
		ev, schema := bindHOF(t, mem, name)
		h := ev.(*hofEval)
		spy := &maxRowsEval{Evaluator: h.fns[0].body}
		h.fns[0].body = spy
		rec := array.NewRecord(schema, []arrow.Array{col, col}, 1)
		out, err := ev.Eval(context.Background(), rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		out.Release()
		if spy.most > cancelCheckRows || spy.calls < 300_000/cancelCheckRows {
			t.Fatalf("%s: the body was evaluated %d times, at most %d rows at once, want slices of at most %d", name, spy.calls, spy.most, cancelCheckRows)
		}
	}
}

type maxRowsEval struct {
	Evaluator
	most, calls int
}

func (m *maxRowsEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	m.calls++
	m.most = max(m.most, int(rec.NumRows()))
	return m.Evaluator.Eval(ctx, rec)
}
