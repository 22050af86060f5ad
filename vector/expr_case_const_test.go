package vector_test

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestCaseConstBranchesModel holds CASE with only constant branches (the
// word-at-a-time merge of expr_case_const.go) to a per-row model: random
// columns with nulls, two WHENs over ranges of a, constants of several
// types, a NULL branch, with and without ELSE, at lengths around the
// 64-row words (in every shape RunExpr slices and chunks the input).
func TestCaseConstBranchesModel(t *testing.T) {
	a := exprSchema("a", vector.Int64)
	type consts struct {
		name    string
		c1, c2  any // Lit arguments; nil is NULL
		else_   any
		noElse  bool
		want    func(v any) any
		typeOut arrow.DataType
	}
	for seed := int64(1); seed <= 12; seed++ {
		rng := rand.New(rand.NewSource(seed))
		n := []int{0, 1, 63, 64, 65, 130, 200, 257}[seed%8]
		rows := make([]vt.Row, n)
		vals := make([]any, n)
		for i := range rows {
			if rng.Intn(7) == 0 {
				rows[i] = vt.Row{nil}
				continue
			}
			v := int64(rng.Intn(100) - 50)
			// Long runs of one branch make whole words.
			if seed%3 == 0 {
				v = int64(i/70*30 - 40)
			}
			rows[i], vals[i] = vt.Row{v}, v
		}
		lo, hi := int64(rng.Intn(40)-30), int64(rng.Intn(40)+5)
		pick := func(v any, c1, c2, e any) any {
			if v == nil {
				return e
			}
			switch x := v.(int64); {
			case x < lo:
				return c1
			case x < hi:
				return c2
			}
			return e
		}
		for _, c := range []consts{
			{name: "bigint", c1: int64(1), c2: int64(-7), else_: int64(0), typeOut: vector.Int64},
			{name: "int", c1: 1, c2: 2, else_: 0, typeOut: vector.Int32},
			{name: "double", c1: 1.5, c2: -2.25, else_: 0.0, typeOut: vector.Float64},
			{name: "null-branch", c1: int64(3), c2: nil, else_: int64(4), typeOut: vector.Int64},
			{name: "no-else", c1: int64(5), c2: int64(6), noElse: true, typeOut: vector.Int64},
			{name: "all-null", c1: nil, c2: nil, noElse: true, typeOut: vector.Null},
		} {
			var elseExpr vector.Expr
			if !c.noElse {
				elseExpr = vector.Lit(c.else_)
			}
			expr := vector.Case([]vector.When{
				{Cond: vector.Lt(col("a"), lit(lo)), Then: vector.Lit(c.c1)},
				{Cond: vector.Lt(col("a"), lit(hi)), Then: vector.Lit(c.c2)},
			}, elseExpr)
			want := make([]any, n)
			for i, v := range vals {
				want[i] = pick(v, c.c1, c.c2, c.else_)
			}
			vt.RunExpr(t, vt.ExprCase{Name: fmt.Sprintf("seed%d/%s", seed, c.name), Schema: a, Rows: rows, Expr: expr, WantType: c.typeOut, Want: want})
		}
	}
}

// BenchmarkCaseConstBranches evaluates q17's three price buckets (CASE
// WHEN ... THEN 1 ELSE 0 END) over batches of 10,000 prices; ns/row is
// wall time and cpu-ns/row process CPU (getrusage, GC included) per row
// and CASE.
//
//	go test -run '^$' -bench CaseConstBranches -benchmem ./vector/
func BenchmarkCaseConstBranches(b *testing.B) {
	const n = 10_000
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{{Name: "price", Type: arrow.PrimitiveTypes.Int64}}, nil)
	bld := array.NewInt64Builder(mem)
	rng := rand.New(rand.NewSource(1))
	for range n {
		bld.Append(int64(rng.ExpFloat64() * 1e5))
	}
	arr := bld.NewArray()
	bld.Release()
	rec := array.NewRecord(schema, []arrow.Array{arr}, n)
	arr.Release()
	defer rec.Release()
	price := vector.Col("price")
	exprs := []vector.Expr{
		vector.If(vector.Lt(price, vector.Lit(10000)), vector.Lit(1), vector.Lit(0)),
		vector.If(vector.And(vector.Ge(price, vector.Lit(10000)), vector.Lt(price, vector.Lit(1000000))), vector.Lit(1), vector.Lit(0)),
		vector.If(vector.Ge(price, vector.Lit(1000000)), vector.Lit(1), vector.Lit(0)),
	}
	evs := make([]vector.Evaluator, len(exprs))
	for i, e := range exprs {
		ev, err := e.Bind(schema, mem)
		if err != nil {
			b.Fatal(err)
		}
		evs[i] = ev
	}
	ctx := context.Background()
	cpu0 := processCPU()
	for b.Loop() {
		for _, ev := range evs {
			out, err := ev.Eval(ctx, rec)
			if err != nil {
				b.Fatal(err)
			}
			out.Release()
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n*len(evs)), "ns/row")
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N*n*len(evs)), "cpu-ns/row")
}
