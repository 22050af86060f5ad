package vector_test

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// BenchmarkRowFunctions measures the row-kernel functions over a column of
// 64K values against baselines measured in the same run: upper (a
// whole-column kernel of the first set) and a plain Go loop of
// bytes.Contains over the same buffers, the floor for contains.
func BenchmarkRowFunctions(b *testing.B) {
	const rows = 64 * 1024
	strs := func(i int) any { return "/page/" + strconv.Itoa(i*7919) + "/detail" }
	run := func(b *testing.B, dt arrow.DataType, value func(int) any, e vector.Expr) {
		rec := benchRecord(b, dt, rows, value)
		defer rec.Release()
		ev, err := e.Bind(rec.Schema(), memory.NewGoAllocator())
		if err != nil {
			b.Fatal(err)
		}
		runEvalBench(b, ev, rec, rows)
	}
	fn := func(b *testing.B, name string, args ...vector.Expr) vector.Expr {
		e, err := vector.LookupFunction(name, args)
		if err != nil {
			b.Fatal(err)
		}
		return e
	}
	x := vector.Col("x")
	b.Run("upper-baseline", func(b *testing.B) { run(b, vector.String, strs, vector.Upper(x)) })
	b.Run("contains", func(b *testing.B) { run(b, vector.String, strs, fn(b, "contains", x, vector.Lit("99"))) })
	b.Run("contains-go-loop", func(b *testing.B) {
		rec := benchRecord(b, vector.String, rows, strs)
		defer rec.Release()
		col := rec.Column(0).(*array.String)
		sub := []byte("99")
		out := make([]bool, rows)
		b.ResetTimer()
		for n := 0; n < b.N; n++ {
			for i := 0; i < rows; i++ {
				out[i] = bytes.Contains([]byte(col.Value(i)), sub)
			}
		}
		b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("lpad", func(b *testing.B) {
		run(b, vector.String, strs, fn(b, "lpad", x, vector.Lit(int32(32)), vector.Lit(".")))
	})
	// The value-building kernels size their output before building it
	// (expr_value_size.go): repeat, rpad and concat measure that cost.
	b.Run("repeat", func(b *testing.B) {
		run(b, vector.String, strs, fn(b, "repeat", x, vector.Lit(int32(3))))
	})
	b.Run("rpad", func(b *testing.B) {
		run(b, vector.String, strs, fn(b, "rpad", x, vector.Lit(int32(40)), vector.Lit("é.")))
	})
	b.Run("concat", func(b *testing.B) {
		run(b, vector.String, strs, vector.Concat(x, vector.Lit("|"), x))
	})
	// replace with a longer replacement counts its matches first; with a
	// shorter one and translate to ASCII the bound is the input's length.
	b.Run("replace_grow", func(b *testing.B) {
		run(b, vector.String, strs, fn(b, "replace", x, vector.Lit("/"), vector.Lit("::")))
	})
	b.Run("replace_shrink", func(b *testing.B) {
		run(b, vector.String, strs, fn(b, "replace", x, vector.Lit("/page"), vector.Lit("p")))
	})
	b.Run("translate", func(b *testing.B) {
		run(b, vector.String, strs, fn(b, "translate", x, vector.Lit("/ae"), vector.Lit("|AE")))
	})
	// regexp_replace builds in a buffer that reserves as it grows.
	b.Run("regexp_replace", func(b *testing.B) {
		run(b, vector.String, strs, fn(b, "regexp_replace", x, vector.Lit("/([a-z]+)"), vector.Lit("<$1>")))
	})
	b.Run("format_string", func(b *testing.B) {
		run(b, vector.String, strs, fn(b, "format_string", vector.Lit("%-30s|"), x))
	})
	b.Run("split_part", func(b *testing.B) {
		run(b, vector.String, strs, fn(b, "split_part", x, vector.Lit("/"), vector.Lit(int32(3))))
	})
	b.Run("hex", func(b *testing.B) { run(b, vector.String, strs, fn(b, "hex", x)) })
	b.Run("year", func(b *testing.B) {
		run(b, vector.Date, func(i int) any { return arrow.Date32(i % 40000) }, fn(b, "year", x))
	})
	b.Run("sqrt", func(b *testing.B) {
		run(b, vector.Float64, func(i int) any { return float64(i) }, fn(b, "sqrt", x))
	})
}
