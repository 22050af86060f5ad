package vector_test

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// TestCastTimeOfDayOnlyRefused: a string holding only a time of day is
// refused by a cast to a timestamp in every mode (Spark would read it on
// the current date); other strings of the same column do not matter, and
// a column without such a string casts as before.
func TestCastTimeOfDayOnlyRefused(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: vector.String, Nullable: true}}, nil)
	cast := func(mode vector.EvalMode, to arrow.DataType, vals ...string) error {
		b := array.NewStringBuilder(mem)
		for _, v := range vals {
			b.Append(v)
		}
		col := b.NewArray()
		b.Release()
		rec := array.NewRecord(schema, []arrow.Array{col}, int64(len(vals)))
		col.Release()
		defer rec.Release()
		ev, err := (&vector.CastExpr{X: vector.Col("s"), To: to, Mode: mode}).Bind(schema, mem)
		if err != nil {
			t.Fatal(err)
		}
		out, err := ev.Eval(context.Background(), rec)
		if err == nil {
			out.Release()
		}
		return err
	}
	for _, mode := range []vector.EvalMode{vector.ModeLegacy, vector.ModeTry, vector.ModeANSI} {
		for _, s := range []string{"10:11:12", "T10:00", "23:59", "10:11:12.5"} {
			err := cast(mode, vector.Timestamp, "2020-01-01 00:00:00", "not a time", s)
			if err == nil {
				t.Errorf("mode %v: cast of %q answered", mode, s)
			}
			if mode != vector.ModeANSI && !errors.Is(err, vector.ErrTimeOfDayOnly) {
				t.Errorf("mode %v: cast of %q: %v, want ErrTimeOfDayOnly", mode, s, err)
			}
		}
		if mode != vector.ModeANSI {
			if err := cast(mode, vector.Timestamp, "2020-01-01 10:11:12", "not a time", ""); err != nil {
				t.Errorf("mode %v: %v", mode, err)
			}
		}
	}
}
