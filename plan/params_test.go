package plan_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// bindAndRun runs "SELECT $1 AS v" with $1 bound to row 0 of col and
// returns the value the query gives back.
func bindAndRun(t *testing.T, mem memory.Allocator, text string, col arrow.Array) (any, error) {
	t.Helper()
	st, err := sql.ParseWithParams(text, sql.Limits{}, func(i int, pos sql.Pos) (sql.Expr, error) {
		return plan.ParamExpr(col, 0, pos)
	})
	if err != nil {
		return nil, err
	}
	ps, err := plan.AnalyzeContext(context.Background(), st, plan.NewMemoryCatalog(), plan.AnalyzeOptions{})
	if err != nil {
		return nil, err
	}
	q, ok := ps.(*plan.QueryStatement)
	if !ok {
		t.Fatalf("%T", ps)
	}
	op, err := plan.Execute(context.Background(), mem, q.Plan, nil)
	if err != nil {
		return nil, err
	}
	defer op.Close()
	rec, err := op.Next(context.Background())
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	return vector.ValueAt(rec.Column(0), 0), nil
}

func oneValue(mem memory.Allocator, dt arrow.DataType, v any) arrow.Array {
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	switch b := b.(type) {
	case *array.Int64Builder:
		b.Append(v.(int64))
	case *array.Int32Builder:
		b.Append(v.(int32))
	case *array.Float64Builder:
		b.Append(v.(float64))
	case *array.StringBuilder:
		b.Append(v.(string))
	case *array.BinaryBuilder:
		b.Append(v.([]byte))
	case *array.BooleanBuilder:
		b.Append(v.(bool))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(v.(int64)))
	}
	return b.NewArray()
}

// TestParamExprTypes binds a value of each type and reads it back.
func TestParamExprTypes(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	for _, tc := range []struct {
		dt   arrow.DataType
		v    any
		want any
	}{
		{arrow.PrimitiveTypes.Int64, int64(math.MinInt64), int64(math.MinInt64)},
		{arrow.PrimitiveTypes.Int32, int32(-7), int32(-7)},
		{arrow.PrimitiveTypes.Float64, 0.1, 0.1},
		{arrow.PrimitiveTypes.Float64, math.Inf(-1), math.Inf(-1)},
		{arrow.BinaryTypes.String, "x' OR 1=1 -- \\ $2", "x' OR 1=1 -- \\ $2"},
		{arrow.FixedWidthTypes.Boolean, true, true},
		{&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, int64(1704067200_123456), int64(1704067200_123456)},
		{&arrow.TimestampType{Unit: arrow.Microsecond}, int64(1704067200_123456), int64(1704067200_123456)},
	} {
		col := oneValue(mem, tc.dt, tc.v)
		got, err := bindAndRun(t, mem, "SELECT $1 AS v", col)
		col.Release()
		if ts, ok := got.(arrow.Timestamp); ok {
			got = int64(ts)
		}
		if err != nil || got != tc.want {
			t.Errorf("%s %v: got %v (%T), %v", tc.dt, tc.v, got, got, err)
		}
	}
	// A null binds as a NULL of its type; an unbound placeholder is refused.
	b := array.NewInt64Builder(mem)
	b.AppendNull()
	col := b.NewArray()
	b.Release()
	defer col.Release()
	if got, err := bindAndRun(t, mem, "SELECT $1 + 1 AS v", col); err != nil || got != nil {
		t.Errorf("null: %v %v", got, err)
	}
	st, err := sql.Parse("SELECT $1 AS v")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plan.AnalyzeContext(context.Background(), st, plan.NewMemoryCatalog(), plan.AnalyzeOptions{}); err == nil || !strings.Contains(err.Error(), "$1") {
		t.Errorf("unbound: %v", err)
	}
}

// FuzzParamBinding binds fuzzed strings, integers, floats and bytes to a
// placeholder and checks that the query returns exactly the value: a
// value cannot change the statement, whatever it contains.
func FuzzParamBinding(f *testing.F) {
	f.Add("x' OR 1=1 --", int64(0), 0.5, []byte{0})
	f.Add(`\'; DROP TABLE t; --`, int64(math.MaxInt64), math.NaN(), []byte("$1"))
	f.Add("$1 $2 ?", int64(-1), math.Inf(1), []byte(nil))
	mem := memory.NewGoAllocator()
	f.Fuzz(func(t *testing.T, s string, i int64, fl float64, by []byte) {
		if utf8.ValidString(s) {
			col := oneValue(mem, arrow.BinaryTypes.String, s)
			got, err := bindAndRun(t, mem, "SELECT $1 AS v", col)
			col.Release()
			if err != nil || got != s {
				t.Fatalf("string %q: got %q, %v", s, got, err)
			}
		}
		col := oneValue(mem, arrow.PrimitiveTypes.Int64, i)
		got, err := bindAndRun(t, mem, "SELECT $1 AS v", col)
		col.Release()
		if err != nil || got != i {
			t.Fatalf("int %d: got %v, %v", i, got, err)
		}
		col = oneValue(mem, arrow.PrimitiveTypes.Float64, fl)
		got, err = bindAndRun(t, mem, "SELECT $1 AS v", col)
		col.Release()
		g, ok := got.(float64)
		if err != nil || !ok || !(g == fl || math.IsNaN(g) && math.IsNaN(fl)) {
			t.Fatalf("float %v: got %v, %v", fl, got, err)
		}
		col = oneValue(mem, arrow.BinaryTypes.Binary, by)
		got, err = bindAndRun(t, mem, "SELECT $1 AS v", col)
		col.Release()
		if gb, ok := got.([]byte); err != nil || !ok || string(gb) != string(by) {
			t.Fatalf("bytes %x: got %v, %v", by, got, err)
		}
	})
}
