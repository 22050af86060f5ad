package vector_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// BenchmarkArrayFunctions evaluates collection functions over 8192 arrays
// of 8 bigints per batch, next to a plain x + 1 over the same 65536
// elements as one column (the floor a whole-column kernel can reach) in
// the same run: transform's lambda body is that same addition, evaluated
// once over the flattened elements.
//
//	go test -run '^$' -bench BenchmarkArrayFunctions -benchtime 20x ./vector/
func BenchmarkArrayFunctions(b *testing.B) {
	const rows, width = 8192, 8
	mem := memory.NewGoAllocator()
	lb := array.NewListBuilder(mem, vector.Int64)
	vb := lb.ValueBuilder().(*array.Int64Builder)
	flat := array.NewInt64Builder(mem)
	for i := 0; i < rows; i++ {
		lb.Append(true)
		for j := 0; j < width; j++ {
			vb.Append(int64(i*width + j%5))
			flat.Append(int64(i*width + j%5))
		}
	}
	list, elems := lb.NewArray(), flat.NewArray()
	lb.Release()
	flat.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: vector.ListOf(vector.Int64), Nullable: true}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{list}, rows)
	list.Release()
	defer rec.Release()
	flatSchema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: vector.Int64, Nullable: true}}, nil)
	flatRec := array.NewRecord(flatSchema, []arrow.Array{elems}, rows*width)
	elems.Release()
	defer flatRec.Release()

	call := func(name string, args ...vector.Expr) vector.Expr {
		e, err := vector.LookupFunction(name, args)
		if err != nil {
			b.Fatal(err)
		}
		return e
	}
	a := vector.Col("a")
	transform := &vector.HigherOrder{Name: "transform", Args: []vector.Expr{a}, Fns: []*vector.Lambda{{
		Params: []string{"x#λ"},
		Body:   &vector.Arithmetic{Op: vector.ArithAdd, Left: &vector.LambdaVar{Name: "x#λ", Type: vector.Int64}, Right: vector.Lit(int64(1))},
	}}}
	cases := []struct {
		name string
		rec  arrow.Record
		expr vector.Expr
	}{
		{"plain-add-flat", flatRec, &vector.Arithmetic{Op: vector.ArithAdd, Left: vector.Col("x"), Right: vector.Lit(int64(1))}},
		{"transform-add", rec, transform},
		{"array_contains", rec, call("array_contains", a, vector.Lit(int64(3)))},
		{"array_distinct", rec, call("array_distinct", a)},
		{"array_union", rec, call("array_union", a, a)},
		{"array_except", rec, call("array_except", a, a)},
		{"reverse", rec, call("reverse", a)},
		{"slice", rec, call("slice", a, vector.Lit(int64(2)), vector.Lit(int64(5)))},
		{"array_compact", rec, call("array_compact", a)},
		{"concat", rec, call("concat", a, a)},
		{"sort_array", rec, call("sort_array", a)},
		{"element_at", rec, call("element_at", a, vector.Lit(int32(2)))},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			ev, err := c.expr.Bind(c.rec.Schema(), mem)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				out, err := ev.Eval(context.Background(), c.rec)
				if err != nil {
					b.Fatal(err)
				}
				out.Release()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows*width), "ns/elem")
		})
	}
}

// BenchmarkTransformLarge evaluates transform(a, x -> x + 1) over one
// batch of 4M elements, as 512K arrays of 8 and as one array: the lambda
// runs over 64K-element slices with a context check between them, which
// this measures against one evaluation over all of them.
//
//	go test -run '^$' -bench BenchmarkTransformLarge -benchtime 10x ./vector/
func BenchmarkTransformLarge(b *testing.B) {
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: vector.ListOf(vector.Int64), Nullable: true}}, nil)
	x := &vector.LambdaVar{Name: "x#λ", Type: vector.Int64}
	transform := &vector.HigherOrder{Name: "transform", Args: []vector.Expr{vector.Col("a")}, Fns: []*vector.Lambda{{
		Params: []string{x.Name}, Body: vector.Add(x, vector.Lit(int64(1))),
	}}}
	const elems = 4 << 20
	for _, width := range []int{8, elems} {
		rows := elems / width
		lb := array.NewListBuilder(mem, vector.Int64)
		vb := lb.ValueBuilder().(*array.Int64Builder)
		vb.Reserve(elems)
		for i := 0; i < rows; i++ {
			lb.Append(true)
			for j := 0; j < width; j++ {
				vb.Append(int64(i*width + j))
			}
		}
		list := lb.NewArray()
		lb.Release()
		rec := array.NewRecord(schema, []arrow.Array{list}, int64(rows))
		list.Release()
		b.Run(fmt.Sprintf("%d_rows_of_%d", rows, width), func(b *testing.B) {
			ev, err := transform.Bind(schema, mem)
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < b.N; i++ {
				out, err := ev.Eval(context.Background(), rec)
				if err != nil {
					b.Fatal(err)
				}
				out.Release()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*elems), "ns/elem")
		})
		rec.Release()
	}
}

// BenchmarkSortArrayLarge sorts one batch of 1M random bigints with
// sort_array, as 128K arrays of 8 and as one array (sorted in 64K runs
// that are then merged, so that it can stop when cancelled).
//
//	go test -run '^$' -bench BenchmarkSortArrayLarge -benchtime 10x ./vector/
func BenchmarkSortArrayLarge(b *testing.B) {
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: vector.ListOf(vector.Int64), Nullable: true}}, nil)
	call, err := vector.LookupFunction("sort_array", []vector.Expr{vector.Col("a")})
	if err != nil {
		b.Fatal(err)
	}
	const elems = 1 << 20
	for _, width := range []int{8, elems} {
		rows := elems / width
		lb := array.NewListBuilder(mem, vector.Int64)
		vb := lb.ValueBuilder().(*array.Int64Builder)
		vb.Reserve(elems)
		for i := 0; i < rows; i++ {
			lb.Append(true)
			for j := 0; j < width; j++ {
				vb.Append(int64(uint64(i*width+j) * 0x9e3779b97f4a7c15 >> 20))
			}
		}
		list := lb.NewArray()
		lb.Release()
		rec := array.NewRecord(schema, []arrow.Array{list}, int64(rows))
		list.Release()
		b.Run(fmt.Sprintf("%d_rows_of_%d", rows, width), func(b *testing.B) {
			ev, err := call.Bind(schema, mem)
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < b.N; i++ {
				out, err := ev.Eval(context.Background(), rec)
				if err != nil {
					b.Fatal(err)
				}
				out.Release()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*elems), "ns/elem")
		})
		rec.Release()
	}
}
