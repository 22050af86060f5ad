package vector_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// benchExprOver evaluates e over a 64K-row column x of type from.
func benchExprOver(b *testing.B, from arrow.DataType, value func(i int) any, e vector.Expr) {
	const rows = 64 * 1024
	rec := benchRecord(b, from, rows, value)
	defer rec.Release()
	ev, err := e.Bind(rec.Schema(), memory.NewGoAllocator())
	if err != nil {
		b.Fatal(err)
	}
	runEvalBench(b, ev, rec, rows)
}

// BenchmarkEvalModes compares, in one run, the ANSI, legacy (ANSI off) and
// try_ evaluation of the hot paths whose checks depend on the mode: in
// range values cost the same in every mode, since overflow is detected per
// batch and only a batch with an offender goes row by row. The
// out-of-range cases (every 100th row) show that slow path; the time zone
// cases the price of a non-UTC session in timestamp → string.
func BenchmarkEvalModes(b *testing.B) {
	modes := []vector.EvalMode{vector.ModeANSI, vector.ModeLegacy, vector.ModeTry}
	x := vector.Col("x")
	digits := func(i int) any { return strconv.Itoa(i * 7919) }
	for _, m := range modes {
		b.Run("string-int/"+m.String(), func(b *testing.B) {
			benchExprOver(b, vector.String, digits, &vector.CastExpr{X: x, To: vector.Int32, Mode: m})
		})
	}
	for _, m := range modes {
		b.Run("bigint-int/"+m.String(), func(b *testing.B) {
			benchExprOver(b, vector.Int64, func(i int) any { return int64(i) }, &vector.CastExpr{X: x, To: vector.Int32, Mode: m})
		})
	}
	for _, m := range modes[1:] {
		b.Run("bigint-int-1pct-overflow/"+m.String(), func(b *testing.B) {
			benchExprOver(b, vector.Int64, func(i int) any {
				if i%100 == 0 {
					return int64(1) << 40
				}
				return int64(i)
			}, &vector.CastExpr{X: x, To: vector.Int32, Mode: m})
		})
	}
	for _, m := range modes {
		b.Run("bigint-add/"+m.String(), func(b *testing.B) {
			benchExprOver(b, vector.Int64, func(i int) any { return int64(i) }, &vector.Arithmetic{Op: vector.ArithAdd, Left: x, Right: vector.Lit(int64(7)), Mode: m})
		})
	}
	for _, m := range modes[1:] {
		b.Run("bigint-add-1pct-overflow/"+m.String(), func(b *testing.B) {
			benchExprOver(b, vector.Int64, func(i int) any {
				if i%100 == 0 {
					return int64(9223372036854775807)
				}
				return int64(i)
			}, &vector.Arithmetic{Op: vector.ArithAdd, Left: x, Right: vector.Lit(int64(7)), Mode: m})
		})
	}
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		b.Fatal(err)
	}
	for _, z := range []struct {
		name string
		loc  *time.Location
	}{{"UTC", nil}, {"Los_Angeles", la}} {
		b.Run("timestamp-string/"+z.name, func(b *testing.B) {
			benchExprOver(b, vector.Timestamp, func(i int) any { return arrow.Timestamp(int64(i) * 1_000_003) },
				&vector.CastExpr{X: x, To: vector.String, Loc: z.loc})
		})
	}
}
